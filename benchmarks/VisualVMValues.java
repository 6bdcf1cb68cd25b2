import org.graalvm.visualvm.lib.jfluid.heap.*;
import java.io.File;
import java.util.*;

/**
 * What bench_values.py measures, done with VisualVM's heap library:
 *
 *   strings   the Strings grouped by text, with the wasted bytes as
 *             hprofkit.Heap.duplicate_strings() counts them (the others'
 *             shallow sizes plus the value arrays only they hold); prints
 *             "seconds groups wasted_bytes open_seconds"
 *   hashmaps  every java.util.HashMap's entries, walked by field values
 *             (table, next, key, value); prints "seconds entries maps open_seconds
 *             null_entries"
 *
 * Seconds exclude opening the dump (HeapFactory.createHeap), printed apart.
 */
public class VisualVMValues {
    static String text(Instance s) {
        Object v = s.getValueOfField("value");
        if (!(v instanceof PrimitiveArrayInstance)) return null;
        PrimitiveArrayInstance arr = (PrimitiveArrayInstance) v;
        List<String> items = arr.getValues();
        StringBuilder b = new StringBuilder();
        if (arr.getJavaClass().getName().equals("char[]")) {
            for (String c : items) b.append(c.charAt(0));
            return b.toString();
        }
        Object coder = s.getValueOfField("coder");
        if (coder instanceof Byte && (Byte) coder == 1) {
            for (int k = 0; k + 1 < items.size(); k += 2)
                b.append((char) ((Byte.parseByte(items.get(k)) & 0xff) | ((Byte.parseByte(items.get(k + 1)) & 0xff) << 8)));
            return b.toString();
        }
        for (String x : items) b.append((char) (Byte.parseByte(x) & 0xff));
        return b.toString();
    }

    static void strings(Heap heap, double open) {
        long start = System.nanoTime();
        Map<String, List<Instance>> groups = new HashMap<>();
        for (Instance s : heap.getJavaClassByName("java.lang.String").getInstances()) {
            String t = text(s);
            if (t != null) groups.computeIfAbsent(t, k -> new ArrayList<>()).add(s);
        }
        Map<Long, Integer> users = new HashMap<>();
        for (List<Instance> members : groups.values())
            for (Instance m : members) users.merge(((Instance) m.getValueOfField("value")).getInstanceId(), 1, Integer::sum);
        long groupsOf2 = 0, wasted = 0;
        for (List<Instance> members : groups.values()) {
            if (members.size() < 2) continue;
            groupsOf2++;
            members.sort(Comparator.comparingLong(Instance::getInstanceId));
            long kept = ((Instance) members.get(0).getValueOfField("value")).getInstanceId();
            Map<Long, Integer> held = new HashMap<>();
            Map<Long, Long> sizes = new HashMap<>();
            for (int k = 1; k < members.size(); k++) {
                Instance m = members.get(k), arr = (Instance) m.getValueOfField("value");
                wasted += m.getSize();
                held.merge(arr.getInstanceId(), 1, Integer::sum);
                sizes.put(arr.getInstanceId(), arr.getSize());
            }
            for (Map.Entry<Long, Integer> e : held.entrySet())
                if (e.getKey() != kept && e.getValue().equals(users.get(e.getKey()))) wasted += sizes.get(e.getKey());
        }
        System.out.println((System.nanoTime() - start) / 1e9 + " " + groupsOf2 + " " + wasted + " " + open);
    }

    static void hashmaps(Heap heap, double open) {
        long start = System.nanoTime(), entries = 0, maps = 0, nulls = 0;
        for (Instance map : heap.getJavaClassByName("java.util.HashMap").getInstances()) {
            maps++;
            Object table = map.getValueOfField("table");
            if (!(table instanceof ObjectArrayInstance)) continue;
            for (Instance node : ((ObjectArrayInstance) table).getValues())
                for (; node != null; node = (Instance) node.getValueOfField("next")) {
                    Object k = node.getValueOfField("key"), v = node.getValueOfField("value");
                    entries++;
                    if (k == null && v == null) nulls++;
                }
        }
        System.out.println((System.nanoTime() - start) / 1e9 + " " + entries + " " + maps + " " + open + " " + nulls);
    }

    public static void main(String[] args) throws Exception {
        long start = System.nanoTime();
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        double open = (System.nanoTime() - start) / 1e9;
        if (args[1].equals("strings")) strings(heap, open);
        else hashmaps(heap, open);
    }
}
