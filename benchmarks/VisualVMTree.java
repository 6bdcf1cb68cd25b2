import org.graalvm.visualvm.lib.jfluid.heap.*;
import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.*;

/**
 * VisualVM's heap library doing what bench_tree.py times hprofkit doing, on
 * the same dump.  Prints "open retained tree by_class by_package merged"
 * (seconds) and the number of objects listed in the tree:
 *
 *  - open: HeapFactory.createHeap and getAllClasses;
 *  - retained: getBiggestObjectsByRetainedSize(20), which computes every
 *    retained size (and the dominator tree);
 *  - tree: the dominator roots and 3 levels below the 25 largest of each
 *    row, largest retained first.  The library keeps each object's
 *    immediate dominator (DominatorTree.getIdomId, read by reflection) but
 *    no children, so a view of the tree reads every object's idom once and
 *    groups the children of the rows it shows;
 *  - by_class: getRetainedSizeByClass of every class (the first computes all);
 *  - by_package: those summed by package, as its Packages view does (a sum,
 *    not the union: VisualVM has no retained size by package);
 *  - merged: the nearest-GC-root chain of the first 100,000 instances of the
 *    class named by args[1], which its "Merged GC Roots" view folds.
 */
public class VisualVMTree {
    static final int ROWS = 25;

    public static void main(String[] args) throws Exception {
        long start = System.nanoTime();
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        List<JavaClass> classes = heap.getAllClasses();
        double open = seconds(start);

        start = System.nanoTime();
        heap.getBiggestObjectsByRetainedSize(20);
        double retained = seconds(start);

        start = System.nanoTime();
        Field domField = heap.getClass().getDeclaredField("domTree");
        domField.setAccessible(true);
        Object domTree = domField.get(heap);
        Method idomOf = domTree.getClass().getDeclaredMethod("getIdomId", long.class);
        idomOf.setAccessible(true);
        Map<Long, List<Instance>> children = new HashMap<>();
        Iterator<Instance> all = heap.getAllInstancesIterator();
        while (all.hasNext()) {
            Instance i = all.next();
            long idom = (Long) idomOf.invoke(domTree, i.getInstanceId());
            children.computeIfAbsent(idom, k -> new ArrayList<>()).add(i);
        }
        Comparator<Instance> largest = (a, b) -> Long.compare(b.getRetainedSize(), a.getRetainedSize());
        List<Instance> row = new ArrayList<>(children.getOrDefault(0L, Collections.emptyList()));
        row.sort(largest);
        long listed = row.size();
        List<Instance> frontier = row.subList(0, Math.min(ROWS, row.size()));
        for (int level = 0; level < 3; level++) {
            List<Instance> next = new ArrayList<>();
            for (Instance parent : frontier) {
                List<Instance> kids = new ArrayList<>(children.getOrDefault(parent.getInstanceId(),
                                                                            Collections.emptyList()));
                kids.sort(largest);
                kids = kids.subList(0, Math.min(ROWS, kids.size()));
                listed += kids.size();
                next.addAll(kids);
            }
            frontier = next;
        }
        double tree = seconds(start);

        start = System.nanoTime();
        long total = 0;
        for (JavaClass c : classes)
            total += c.getRetainedSizeByClass();
        double byClass = seconds(start);

        start = System.nanoTime();
        Map<String, Long> packages = new HashMap<>();
        for (JavaClass c : classes) {
            String name = c.getName().replace("[]", "");
            int dot = name.lastIndexOf('.');
            packages.merge(dot < 0 ? "" : name.substring(0, dot), c.getRetainedSizeByClass(), Long::sum);
        }
        double byPackage = seconds(start);

        start = System.nanoTime();
        JavaClass target = heap.getJavaClassByName(args[1]);
        Iterator<Instance> instances = target.getInstancesIterator();
        Map<Long, Integer> through = new HashMap<>();
        for (int k = 0; k < 100000 && instances.hasNext(); k++) {
            for (Instance i = instances.next(); i != null; i = i.getNearestGCRootPointer()) {
                through.merge(i.getInstanceId(), 1, Integer::sum);
                if (i.isGCRoot())
                    break;
            }
        }
        double merged = seconds(start);
        System.out.println(open + " " + retained + " " + tree + " " + byClass + " " + byPackage + " " + merged + " "
                           + listed + " " + packages.size() + " " + through.size() + " " + total);
    }

    static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }
}
