import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.source.util.JavacTask;
import com.sun.source.util.Plugin;
import com.sun.source.util.TaskEvent;
import com.sun.source.util.TaskListener;
import java.lang.management.ManagementFactory;

/** A javac plugin that writes javac's own heap to a dump once it has generated `count`
 * classes: -Xplugin:"JavacHeapDump FILE COUNT [live|all]" (live objects only, the default, or
 * every object, garbage too, as `jmap -dump` without `live`).  The dump is taken by javac's
 * main thread, in the middle of the compilation (_common.javac_dump). */
public class JavacHeapDump implements Plugin {
    @Override
    public String getName() {
        return "JavacHeapDump";
    }

    @Override
    public void init(JavacTask task, String... args) {
        String file = args[0];
        int count = Integer.parseInt(args[1]);
        boolean live = args.length < 3 || !args[2].equals("all");
        task.addTaskListener(new TaskListener() {
            int generated;

            @Override
            public void finished(TaskEvent e) {
                if (e.getKind() == TaskEvent.Kind.GENERATE && ++generated == count) {
                    try {
                        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).dumpHeap(file, live);
                    } catch (java.io.IOException x) {
                        throw new RuntimeException(x);
                    }
                }
            }
        });
    }
}
