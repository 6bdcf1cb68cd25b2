import org.graalvm.visualvm.lib.jfluid.heap.*;
import java.io.File;
import java.io.PrintStream;
import java.util.*;

/**
 * What VisualVM's heap library reads of a dump's values, as JSON lines: the
 * independent side of tests/test_values.py (run with the library's jar on the
 * class path, on a symbolic link to the dump: VisualVM writes caches next to it).
 *
 *   values    one line per object: instances with every field (VisualVM's order:
 *             the class's own first, then its superclasses'), class objects with
 *             their statics, object arrays with every element (0 for null),
 *             int/long/boolean arrays with their elements, and String text
 *   threads   one line per thread GC root (its object, name and stack trace as
 *             StackTraceElements) and one per Java-frame or JNI-local root (its
 *             thread, frame number and object)
 *
 * Field values are printed as VisualVM's getValue() strings ("0" for a null
 * reference, the id of an object otherwise).
 */
public class VisualVMValues {
    static PrintStream out;

    static String q(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    /** A String's text from its value array (char[], or byte[] with coder as HotSpot writes it). */
    static String text(Instance i) {
        Object v = i.getValueOfField("value");
        if (!(v instanceof PrimitiveArrayInstance)) return null;
        PrimitiveArrayInstance arr = (PrimitiveArrayInstance) v;
        List<String> items = arr.getValues();
        StringBuilder b = new StringBuilder();
        if (arr.getJavaClass().getName().equals("char[]")) {
            for (String c : items) b.append(c.charAt(0));
            Object count = i.getValueOfField("count"), offset = i.getValueOfField("offset");
            if (count instanceof Integer && offset instanceof Integer) {
                int o = (Integer) offset, n = (Integer) count;
                if (o >= 0 && n >= 0 && o + n <= b.length()) return b.substring(o, o + n);
            }
            return b.toString();
        }
        Object coder = i.getValueOfField("coder");
        if (coder instanceof Byte && (Byte) coder == 1) {
            for (int k = 0; k + 1 < items.size(); k += 2)
                b.append((char) ((Byte.parseByte(items.get(k)) & 0xff) | ((Byte.parseByte(items.get(k + 1)) & 0xff) << 8)));
            return b.toString();
        }
        for (String x : items) b.append((char) (Byte.parseByte(x) & 0xff));
        return b.toString();
    }

    static void fields(StringBuilder b, List<FieldValue> values) {
        b.append('[');
        boolean first = true;
        for (FieldValue f : values) {
            if (!first) b.append(',');
            first = false;
            b.append('[').append(q(f.getField().getName())).append(',').append(q(f.getField().getType().getName()))
             .append(',').append(q(f.getValue())).append(']');
        }
        b.append(']');
    }

    static void values(Heap heap) {
        for (Iterator<Instance> it = heap.getAllInstancesIterator(); it.hasNext(); ) {
            Instance i = it.next();
            String cls = i.getJavaClass().getName();
            StringBuilder b = new StringBuilder("{\"id\":").append(i.getInstanceId()).append(",\"class\":").append(q(cls))
                .append(",\"size\":").append(i.getSize());
            if (i instanceof ObjectArrayInstance) {
                b.append(",\"elements\":[");
                boolean first = true;
                for (Instance e : ((ObjectArrayInstance) i).getValues()) {
                    if (!first) b.append(',');
                    first = false;
                    b.append(e == null ? 0 : e.getInstanceId());
                }
                b.append(']');
            } else if (i instanceof PrimitiveArrayInstance) {
                PrimitiveArrayInstance p = (PrimitiveArrayInstance) i;
                b.append(",\"length\":").append(p.getLength());
                if (cls.equals("int[]") || cls.equals("long[]") || cls.equals("boolean[]")) {
                    b.append(",\"elements\":[");
                    boolean first = true;
                    for (String e : p.getValues()) {
                        if (!first) b.append(',');
                        first = false;
                        b.append(e);
                    }
                    b.append(']');
                }
            } else {
                JavaClass self = cls.equals("java.lang.Class") ? heap.getJavaClassByID(i.getInstanceId()) : null;
                b.append(",\"fields\":");
                fields(b, i.getFieldValues());
                if (self != null) {
                    b.append(",\"class_of\":").append(q(self.getName())).append(",\"statics\":");
                    fields(b, self.getStaticFieldValues());
                }
                if (cls.equals("java.lang.String")) b.append(",\"string\":").append(q(text(i)));
            }
            out.println(b.append('}'));
        }
        // HotSpot dumps enumerate no class objects: their statics come here.
        for (JavaClass c : heap.getAllClasses()) {
            StringBuilder b = new StringBuilder("{\"class_id\":").append(c.getJavaClassId()).append(",\"name\":")
                .append(q(c.getName())).append(",\"super\":")
                .append(c.getSuperClass() == null ? "null" : Long.toString(c.getSuperClass().getJavaClassId()))
                .append(",\"statics\":");
            fields(b, c.getStaticFieldValues());
            out.println(b.append('}'));
        }
    }

    static String threadName(Instance thread) {
        Object name = thread.getValueOfField("name");
        if (name instanceof Instance && ((Instance) name).getJavaClass().getName().equals("java.lang.String"))
            return text((Instance) name);
        if (name instanceof PrimitiveArrayInstance) {
            StringBuilder b = new StringBuilder();
            for (String c : ((PrimitiveArrayInstance) name).getValues()) b.append(c.charAt(0));
            return b.toString();
        }
        return null;
    }

    static void threads(Heap heap) {
        for (GCRoot r : heap.getGCRoots()) {
            Instance i = r.getInstance();
            if (r instanceof ThreadObjectGCRoot) {
                StringBuilder b = new StringBuilder("{\"thread\":").append(i == null ? "null" : Long.toString(i.getInstanceId()))
                    .append(",\"name\":").append(i == null ? "null" : q(threadName(i))).append(",\"frames\":[");
                StackTraceElement[] trace = ((ThreadObjectGCRoot) r).getStackTrace();
                for (int k = 0; trace != null && k < trace.length; k++) {
                    StackTraceElement e = trace[k];
                    if (k > 0) b.append(',');
                    b.append('[').append(q(e.getClassName())).append(',').append(q(e.getMethodName())).append(',')
                     .append(q(e.getFileName())).append(',').append(e.getLineNumber()).append(']');
                }
                out.println(b.append("]}"));
            } else if (r instanceof JavaFrameGCRoot || r instanceof JniLocalGCRoot) {
                ThreadObjectGCRoot t = r instanceof JavaFrameGCRoot ? ((JavaFrameGCRoot) r).getThreadGCRoot()
                                                                   : ((JniLocalGCRoot) r).getThreadGCRoot();
                int frame = r instanceof JavaFrameGCRoot ? ((JavaFrameGCRoot) r).getFrameNumber()
                                                         : ((JniLocalGCRoot) r).getFrameNumber();
                Instance ti = t == null ? null : t.getInstance();
                out.println("{\"local\":" + (i == null ? "null" : Long.toString(i.getInstanceId())) + ",\"kind\":"
                    + q(r.getKind()) + ",\"of\":" + (ti == null ? "null" : Long.toString(ti.getInstanceId()))
                    + ",\"frame\":" + frame + "}");
            }
        }
    }

    public static void main(String[] a) throws Exception {
        out = new PrintStream(System.out, false, "UTF-8");
        Heap heap = HeapFactory.createHeap(new File(a[0]));
        switch (a[1]) {
            case "values": values(heap); break;
            case "threads": threads(heap); break;
            default: System.err.println("unknown mode " + a[1] + " (values, threads)"); System.exit(2);
        }
        out.flush();
    }
}
