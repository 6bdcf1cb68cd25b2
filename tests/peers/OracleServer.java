import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Runs the oracles' programs (HeapGraphOracle, HeapOracle, VisualVMValues) one after another in
 * one JVM, as tests/visualvm.py asks: each `java MAIN ARGS...` would pay the JVM's start and
 * warm-up again (about 40% of the oracle's CPU time in a suite).  Each request is one line, the
 * main class and its arguments separated by tabs; each reply is "STATUS OUT_BYTES ERR_BYTES\n",
 * then what the program printed to System.out, then to System.err.  STATUS is 1 when main threw
 * (its stack trace is in ERR).  The programs keep no state from one run to the next that their
 * main() does not set again.
 */
public class OracleServer {
    public static void main(String[] unused) throws Exception {
        BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        OutputStream replies = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out));
        for (String line; (line = requests.readLine()) != null; ) {
            String[] words = line.split("\t");
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            System.setOut(new PrintStream(out, false, "UTF-8"));
            System.setErr(new PrintStream(err, true, "UTF-8"));
            int status = 0;
            try {
                Class.forName(words[0]).getMethod("main", String[].class)
                    .invoke(null, (Object) Arrays.copyOfRange(words, 1, words.length));
            } catch (InvocationTargetException e) {
                e.getCause().printStackTrace();
                status = 1;
            }
            System.out.flush();
            System.err.flush();
            replies.write((status + " " + out.size() + " " + err.size() + "\n").getBytes(StandardCharsets.US_ASCII));
            out.writeTo(replies);
            err.writeTo(replies);
            replies.flush();
        }
    }
}
