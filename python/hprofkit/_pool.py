"""The local worker pool of hprofkit.batch: worker processes that each run one task at a time.

Unlike concurrent.futures.ProcessPoolExecutor, where one dead worker breaks the pool and fails
every running and queued task:
- a worker that dies (the OOM killer's SIGKILL, a segfault) fails only the task it was running,
  with WorkerDied ("worker died: signal 9 (SIGKILL)"), and a new worker takes its place;
- workers run in a session of their own, so a terminal's Ctrl-C reaches the caller alone (no
  worker prints a KeyboardInterrupt traceback): the caller stops them (terminate());
- a worker dies with its caller however the caller ends (Linux: PR_SET_PDEATHSIG; elsewhere a
  worker waiting for work sees its pipe close), so no worker outlives the command.

Workers start as multiprocessing's "spawn" children do (a fresh interpreter, the caller's sys.path,
working directory and main module), so a task may be any function a spawned process can import."""

from __future__ import annotations

import concurrent.futures
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections import deque
from multiprocessing import connection, spawn
from typing import Any, Callable

# How long a worker has to unwind after SIGTERM (remove the output it was writing) before SIGKILL.
STOP_GRACE = 10.0

# Set while a worker imports the caller's main module: a batch started then (a script without an
# `if __name__ == "__main__":` guard) would start workers without end.
BOOTING = "HPROFKIT_WORKER_BOOTING"

# Run by each worker's interpreter: take the caller's paths and main module first (hprofkit may be
# importable only from there), then serve.
_BOOT = ("import os, sys; from multiprocessing import connection, spawn; "
         "c = connection.Connection(int(sys.argv[1])); os.environ[%r] = '1'; spawn.prepare(c.recv()); "
         "del os.environ[%r]; from hprofkit._pool import serve; serve(c)") % (BOOTING, BOOTING)


class WorkerDied(Exception):
    """The worker running a task ended without an answer: killed by a signal or exited."""

    def __init__(self, pid: int, returncode: int | None) -> None:
        if returncode is not None and returncode < 0:
            try:
                how = f"signal {-returncode} ({signal.Signals(-returncode).name})"
            except ValueError:
                how = f"signal {-returncode}"
        else:
            how = f"exit status {returncode}"
        super().__init__(f"worker died: {how}")
        self.pid = pid
        self.returncode = returncode


class _Worker:
    """One worker process and the caller's end of its pipe."""

    def __init__(self, prep: dict[str, Any]) -> None:
        ours, theirs = connection.Pipe(duplex=True)
        try:
            self.process = subprocess.Popen([sys.executable, "-c", _BOOT, str(theirs.fileno())],
                                            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                            start_new_session=True)
        finally:
            theirs.close()
        self.conn = ours
        self.future: concurrent.futures.Future[Any] | None = None
        ours.send(prep)

    @property
    def pid(self) -> int:
        return self.process.pid

    def died(self) -> WorkerDied:
        self.conn.close()
        return WorkerDied(self.pid, self.process.wait())

    def stop(self, kill: bool) -> None:
        """Ends the worker: asked politely when idle, SIGTERM (then SIGKILL) when `kill`."""
        if kill:
            self.process.terminate()
        else:
            try:
                self.conn.send_bytes(b"")  # no more work
            except OSError:
                pass
        self.conn.close()
        try:
            self.process.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class WorkerPool(concurrent.futures.Executor):
    """A concurrent.futures.Executor over up to `max_workers` worker processes (see the module
    docstring).  Workers start as tasks arrive; a manager thread feeds them and reads answers."""

    def __init__(self, max_workers: int) -> None:
        if os.environ.get(BOOTING):
            raise RuntimeError("hprofkit.batch started while a batch worker imports the main module: "
                               "guard the script's batch call with `if __name__ == '__main__':`")
        self._max = max(1, max_workers)
        self._prep = spawn.get_preparation_data("hprofkit-worker")
        self._prep.pop("authkey", None)  # multiprocessing's secret: the workers need none
        self._lock = threading.Lock()
        self._pending: deque[tuple[concurrent.futures.Future[Any], Callable[..., Any], tuple[Any, ...]]] = deque()
        self._idle: list[_Worker] = []
        self._busy: list[_Worker] = []
        self._closing = False   # no new tasks; stop once the queue is empty
        self._killing = False   # stop now: running tasks are abandoned
        self._wake_r, self._wake_w = connection.Pipe(duplex=False)
        self._thread: threading.Thread | None = None

    # -- the caller's side --

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        if kwargs:
            raise TypeError("WorkerPool.submit takes positional arguments only")
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._lock:
            if self._closing:
                raise RuntimeError("cannot submit to a pool that was shut down")
            self._pending.append((future, fn, args))
            if self._thread is None:
                self._thread = threading.Thread(target=self._manage, name="hprofkit-pool", daemon=True)
                self._thread.start()
        self._wake()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closing = True
            if cancel_futures:
                self._cancel_pending()
        self._wake()
        if wait and self._thread is not None:
            self._thread.join()

    def terminate(self) -> None:
        """Stops at once: queued tasks are cancelled, running ones stopped (SIGTERM, which lets a
        task remove the output it was writing; SIGKILL after STOP_GRACE seconds)."""
        with self._lock:
            self._closing = self._killing = True
            self._cancel_pending()
        self._wake()
        if self._thread is not None:
            self._thread.join()

    def _cancel_pending(self) -> None:
        while self._pending:
            self._pending.popleft()[0].cancel()

    def _wake(self) -> None:
        try:
            self._wake_w.send_bytes(b"")
        except OSError:  # the manager is gone
            pass

    # -- the manager thread --

    def _manage(self) -> None:
        try:
            while self._step():
                pass
        except BaseException as exc:  # a bug here must fail the futures, not leave them waiting
            with self._lock:
                self._closing = True
                failed = [entry[0] for entry in self._pending] + [w.future for w in self._busy if w.future]
                self._pending.clear()
                for worker in self._busy:
                    worker.future = None
            for future in failed:
                if future.set_running_or_notify_cancel() if not future.running() else True:
                    future.set_exception(RuntimeError(f"the worker pool failed: {type(exc).__name__}: {exc}"))
            raise
        finally:
            with self._lock:
                workers, self._idle, self._busy = self._idle + self._busy, [], []
                killing = self._killing
            for worker in workers:
                if worker.future is not None:
                    worker.future.set_exception(concurrent.futures.CancelledError("the batch was stopped"))
                worker.stop(kill=killing or worker.future is not None)
            self._wake_r.close()
            self._wake_w.close()

    def _step(self) -> bool:
        """Hands out work, waits for an answer, a death or a wake-up; False when done."""
        with self._lock:
            if self._killing:
                return False
            self._dispatch()
            if self._closing and not self._pending and not self._busy:
                return False
            workers = {w.conn: w for w in self._busy + self._idle}
        for ready in connection.wait([self._wake_r, *workers]):
            if ready is self._wake_r:
                self._wake_r.recv_bytes()
            else:
                self._answer(workers[ready])  # type: ignore[index]
        return True

    def _dispatch(self) -> None:
        while self._pending:
            future, fn, args = self._pending[0]
            if future.cancelled():
                self._pending.popleft()
                continue
            if not self._idle and len(self._busy) >= self._max:
                return
            self._pending.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                job = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # noqa: BLE001 - an unpicklable task fails alone
                future.set_exception(exc)
                continue
            worker = self._idle.pop() if self._idle else _Worker(self._prep)
            worker.future = future
            self._busy.append(worker)
            try:
                worker.conn.send_bytes(job)
            except OSError:
                pass  # it died idle: the next wait() reads its end

    def _answer(self, worker: _Worker) -> None:
        """Reads what a worker says: its task's answer, or the end of its pipe (it died)."""
        future = worker.future
        if future is None:  # an idle worker died (killed from outside): drop it
            with self._lock:
                self._idle.remove(worker)
            worker.died()
            return
        try:
            ok, value = pickle.loads(worker.conn.recv_bytes())
        except (EOFError, OSError):
            with self._lock:
                self._busy.remove(worker)
            future.set_exception(worker.died())  # a new worker takes the next task
            return
        except Exception as exc:  # noqa: BLE001 - an answer that does not unpickle here
            ok, value = False, exc
        with self._lock:
            self._busy.remove(worker)
            worker.future = None
            self._idle.append(worker)
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


# ---- the worker's side ---------------------------------------------------------------------------

class _Stopped(BaseException):
    """SIGTERM from the pool: unwinds the task (an output being written is removed)."""


def _raise_stopped(signum: int, frame: object) -> None:
    raise _Stopped()


def _die_with_parent() -> None:
    """Linux: the kernel sends SIGKILL when the caller ends, however it ends."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return


def serve(conn: connection.Connection) -> None:
    """A worker's loop: runs each task sent and answers (True, value) or (False, exception)."""
    parent = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller has the terminal; it stops us
    signal.signal(signal.SIGTERM, _raise_stopped)
    _die_with_parent()
    if os.getppid() != parent:  # the caller ended before the kernel was told
        return
    try:
        while True:
            try:
                job = conn.recv_bytes()
            except (EOFError, OSError):
                return
            if not job:  # the pool is done with us
                return
            answer: tuple[bool, Any]
            try:
                fn, args = pickle.loads(job)
                answer = (True, fn(*args))
            except Exception as exc:  # noqa: BLE001 - handed to the caller's future
                answer = (False, exc)
            try:
                data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # noqa: BLE001 - a value or exception that does not pickle
                data = pickle.dumps((False, TypeError(f"the task's answer does not pickle: {exc}")))
            conn.send_bytes(data)
    except _Stopped:
        return
