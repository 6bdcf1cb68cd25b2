import org.graalvm.visualvm.lib.jfluid.heap.*;
import java.io.File;

/**
 * VisualVM's time to open a dump: HeapFactory.createHeap, then the class list
 * and every class's instance count (what its heap walker shows first).
 * Prints "open_seconds classes instances".
 */
public class VisualVMOpen {
    public static void main(String[] args) throws Exception {
        long start = System.nanoTime();
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        long instances = 0;
        int classes = 0;
        for (JavaClass c : heap.getAllClasses()) {
            instances += c.getInstancesCount();
            classes++;
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.println(seconds + " " + classes + " " + instances);
    }
}
