import org.graalvm.visualvm.lib.jfluid.heap.*;
import java.io.File;

/**
 * VisualVM's time for retained sizes: HeapFactory.createHeap (timed apart),
 * then getBiggestObjectsByRetainedSize(20), which computes the retained size
 * of every object first (its "Compute retained sizes").
 * Prints "open_seconds retained_seconds biggest_retained_size".
 */
public class VisualVMRetained {
    public static void main(String[] args) throws Exception {
        long start = System.nanoTime();
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        heap.getAllClasses();
        double open = (System.nanoTime() - start) / 1e9;
        start = System.nanoTime();
        java.util.List<Instance> biggest = heap.getBiggestObjectsByRetainedSize(20);
        double retained = (System.nanoTime() - start) / 1e9;
        System.out.println(open + " " + retained + " " + biggest.get(0).getRetainedSize());
    }
}
