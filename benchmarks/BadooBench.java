// Times Badoo's cruncher or decruncher in one JVM, run after run, through the
// calls their own main() makes (bench_bmd.py runs it with Badoo's class path):
//
//     java -cp CLASSPATH BadooBench.java crunch|decrunch IN OUT RUNS
//
// Prints "seconds S" per run: the first pays for class loading and the JIT,
// the best is the tool at its fastest.
import com.badoo.bmd.decruncher.BmdDecruncher;
import com.badoo.hprof.cruncher.HprofCruncher;
import com.badoo.hprof.cruncher.HprofFileSource;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.util.Collections;

public class BadooBench {
    public static void main(String[] args) throws Exception {
        String what = args[0];
        File in = new File(args[1]), out = new File(args[2]);
        int runs = Integer.parseInt(args[3]);
        for (int i = 0; i < runs; i++) {
            long start = System.nanoTime();
            if (what.equals("crunch")) {
                try (OutputStream o = new BufferedOutputStream(new FileOutputStream(out))) {
                    HprofCruncher.crunch(new HprofFileSource(in), o, new HprofCruncher.Config.Builder().build());
                }
            } else {
                BmdDecruncher.decrunch(new FileInputStream(in), new FileOutputStream(out),
                                       Collections.<String>emptyList());
            }
            System.out.println("seconds " + (System.nanoTime() - start) / 1e9);
        }
    }
}
