import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.*;
import java.util.concurrent.*;

/**
 * Writes a HotSpot dump holding every collection layout hprofkit walks, as
 * this JDK lays them out: hash maps with null keys and tree bins, a
 * ConcurrentHashMap with tree bins and counter cells, linked, tree, skip-list
 * and circular collections, the ImmutableCollections, Collections' wrappers
 * and singletons, a WeakHashMap with a null key, subclasses.
 *
 *   java CollectionsHeap.java OUT.hprof
 *
 * Everything is reachable from the static KEEP; a second thread ("values-holder")
 * holds a local list while the dump is written.
 */
public class CollectionsHeap {
    static final List<Object> KEEP = new ArrayList<>();

    /** Keys that all collide: HashMap and ConcurrentHashMap turn their bin into a tree. */
    static final class Same implements Comparable<Same> {
        final int n;
        Same(int n) { this.n = n; }
        @Override public int hashCode() { return 42; }
        @Override public boolean equals(Object o) { return o instanceof Same && ((Same) o).n == n; }
        @Override public int compareTo(Same o) { return Integer.compare(n, o.n); }
    }

    static class MyLinkedMap<K, V> extends LinkedHashMap<K, V> { }

    static <T extends Collection<Object>> T fill(T c, int n, String tag) {
        for (int i = 0; i < n; i++) c.add(tag + i);
        return c;
    }

    static <T extends Map<Object, Object>> T fillMap(T m, int n, String tag) {
        for (int i = 0; i < n; i++) m.put(tag + i, Integer.valueOf(i * 7));
        return m;
    }

    public static void main(String[] args) throws Exception {
        HashMap<Object, Object> hash = fillMap(new HashMap<>(), 20, "h");
        hash.put(null, "null-key");
        hash.put("null-value", null);
        KEEP.add(hash);
        HashMap<Object, Object> trees = new HashMap<>();
        for (int i = 0; i < 80; i++) trees.put(new Same(i), "tree" + i);   // one bin of 80: a tree
        for (int i = 0; i < 40; i++) trees.put("plain" + i, i);
        KEEP.add(trees);
        KEEP.add(new HashMap<>());                                           // no table yet
        HashMap<Object, Object> emptied = fillMap(new HashMap<>(), 100, "e");
        emptied.clear();                                                     // a table, no entries
        KEEP.add(emptied);
        LinkedHashMap<Object, Object> linked = fillMap(new LinkedHashMap<>(), 15, "l");
        linked.put(null, "null-key");
        KEEP.add(linked);
        LinkedHashMap<Object, Object> access = new LinkedHashMap<>(16, 0.75f, true);
        fillMap(access, 10, "a");
        access.get("a3");
        access.get("a0");
        KEEP.add(access);
        KEEP.add(fillMap(new MyLinkedMap<>(), 5, "sub"));
        KEEP.add(fill(new HashSet<>(), 12, "s"));
        KEEP.add(fill(new LinkedHashSet<>(), 12, "ls"));
        Hashtable<Object, Object> table = new Hashtable<>();
        fillMap(table, 30, "t");
        KEEP.add(table);
        Properties props = new Properties();
        for (int i = 0; i < 9; i++) props.setProperty("p" + i, "v" + i);
        KEEP.add(props);
        WeakHashMap<Object, Object> weak = new WeakHashMap<>();
        for (int i = 0; i < 10; i++) {
            Object key = "w" + i;
            KEEP.add(key);                                                   // strongly held: never cleared
            weak.put(key, i);
        }
        weak.put(null, "null-key");
        KEEP.add(weak);
        IdentityHashMap<Object, Object> identity = fillMap(new IdentityHashMap<>(), 11, "i");
        identity.put(null, "null-key");
        KEEP.add(identity);
        TreeMap<Object, Object> tree = new TreeMap<>();
        for (int i = 0; i < 40; i++) tree.put(String.format("k%03d", (i * 17) % 40), i);
        KEEP.add(tree);
        KEEP.add(fill(new TreeSet<>(), 25, "ts"));
        ConcurrentHashMap<Object, Object> chm = new ConcurrentHashMap<>();
        for (int i = 0; i < 70; i++) chm.put(new Same(i), "c" + i);          // a TreeBin
        fillMap(chm, 50, "cm");
        contend(chm);
        KEEP.add(chm);
        KEEP.add(fillMap(new ConcurrentSkipListMap<>(), 30, "sk"));
        KEEP.add(fill(new ConcurrentSkipListSet<>(), 20, "sks"));
        KEEP.add(fill(new ArrayList<>(), 13, "al"));
        ArrayList<Object> nulls = fill(new ArrayList<>(), 4, "n");
        nulls.add(1, null);
        KEEP.add(nulls);
        KEEP.add(fill(new LinkedList<>(), 9, "ll"));
        ArrayDeque<Object> deque = fill(new ArrayDeque<>(), 30, "dq");
        for (int i = 0; i < 20; i++) { deque.pollFirst(); deque.addLast("more" + i); }   // wrapped around
        KEEP.add(deque);
        KEEP.add(fill(new Vector<>(), 7, "v"));
        KEEP.add(fill(new Stack<>(), 5, "st"));
        KEEP.add(fill(new CopyOnWriteArrayList<>(), 6, "cow"));
        KEEP.add(fill(new CopyOnWriteArraySet<>(), 6, "cows"));
        PriorityQueue<Object> queue = new PriorityQueue<>();
        for (int i = 0; i < 17; i++) queue.add(String.format("pq%02d", (i * 5) % 17));
        KEEP.add(queue);
        ArrayBlockingQueue<Object> bounded = new ArrayBlockingQueue<>(10);
        for (int i = 0; i < 8; i++) bounded.add("abq" + i);
        for (int i = 0; i < 5; i++) { bounded.poll(); bounded.add("again" + i); }
        KEEP.add(bounded);
        KEEP.add(fill(new LinkedBlockingQueue<>(), 6, "lbq"));
        KEEP.add(fill(new LinkedBlockingDeque<>(), 6, "lbd"));
        KEEP.add(fill(new ConcurrentLinkedQueue<>(), 6, "clq"));
        KEEP.add(fill(new ConcurrentLinkedDeque<>(), 6, "cld"));
        KEEP.add(List.of());
        KEEP.add(List.of("one"));
        KEEP.add(List.of("one", "two"));
        KEEP.add(List.of("a", "b", "c", "d", "e"));
        KEEP.add(Set.of("x"));
        KEEP.add(Set.of("x", "y"));
        KEEP.add(Set.of("p", "q", "r", "s", "t", "u"));
        KEEP.add(Map.of());
        KEEP.add(Map.of("k", "v"));
        KEEP.add(Map.of("k1", "v1", "k2", "v2", "k3", "v3", "k4", "v4"));
        KEEP.add(Arrays.asList("as", "list", null));
        KEEP.add(Collections.emptyList());
        KEEP.add(Collections.emptyMap());
        KEEP.add(Collections.emptySet());
        KEEP.add(Collections.singletonList("single"));
        KEEP.add(Collections.singleton("single-set"));
        KEEP.add(Collections.singletonMap("sk", "sv"));
        KEEP.add(Collections.unmodifiableList(fill(new ArrayList<>(), 3, "ul")));
        KEEP.add(Collections.unmodifiableSet(fill(new HashSet<>(), 3, "us")));
        KEEP.add(Collections.unmodifiableMap(fillMap(new HashMap<>(), 3, "um")));
        KEEP.add(Collections.unmodifiableSortedMap(fillMap(new TreeMap<>(), 3, "usm")));
        KEEP.add(Collections.synchronizedList(fill(new LinkedList<>(), 3, "sl")));
        KEEP.add(Collections.synchronizedMap(fillMap(new Hashtable<>(), 3, "sm")));
        KEEP.add(Collections.synchronizedSet(fill(new TreeSet<>(), 3, "ss")));
        KEEP.add(Collections.checkedList(fill(new ArrayList<>(), 2, "ck"), Object.class));
        Set<Object> fromMap = Collections.newSetFromMap(new ConcurrentHashMap<Object, Boolean>());
        KEEP.add(fill(fromMap, 4, "sfm"));
        KEEP.add(Collections.unmodifiableCollection(Collections.synchronizedCollection(fill(new ArrayList<>(), 2, "nest"))));
        EnumMap<TimeUnit, Object> enums = new EnumMap<>(TimeUnit.class);
        enums.put(TimeUnit.SECONDS, "s");
        KEEP.add(enums);                                                     // no layout: not a collection to hprofkit
        KEEP.add(new Object[] { "array", null, 3 });

        Thread holder = new Thread(() -> {
            List<Object> local = fill(new ArrayList<>(), 3, "local");
            synchronized (CollectionsHeap.class) {
                try { CollectionsHeap.class.wait(); } catch (InterruptedException e) { KEEP.add(local); }
            }
        }, "values-holder");
        holder.setDaemon(true);
        holder.start();
        while (holder.getState() != Thread.State.WAITING) Thread.sleep(1);

        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        new java.io.File(args[0]).delete();
        bean.dumpHeap(args[0], true);
        System.out.println("wrote " + args[0]);
        System.exit(0);
    }

    /** Puts and removes from several threads until the map counts in counter cells. */
    static void contend(ConcurrentHashMap<Object, Object> chm) throws Exception {
        java.lang.reflect.Field cells = null;
        try {
            cells = ConcurrentHashMap.class.getDeclaredField("counterCells");
            cells.setAccessible(true);
        } catch (RuntimeException e) {
            cells = null;                                                    // not opened: no cells then
        }
        for (int round = 0; round < 200 && (cells == null || cells.get(chm) == null); round++) {
            Thread[] threads = new Thread[4];
            for (int t = 0; t < threads.length; t++) {
                final int base = t * 100000;
                threads[t] = new Thread(() -> {
                    for (int i = 0; i < 20000; i++) { chm.put("x" + (base + i), i); chm.remove("x" + (base + i)); }
                });
                threads[t].start();
            }
            for (Thread t : threads) t.join();
            if (cells == null) break;
        }
    }
}
