"""Long calls: Ctrl-C stops any of them within half a second (a child process is signalled while
it works), other Python threads run while C++ works (the GIL is released), and the thread count
is set by fpemu.set_num_threads or $FPEMU_NUM_THREADS without changing a result. Run by pytest in
the venvs of ./dev test."""
import os
import selectors
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import fpemu

# Calls that take seconds on two threads, each as (setup, call): several times the signal's delay
# below on any CPU of today.
LONG_CALLS = {
    # float64 input: sr-exact from binary64 runs the scalar core (the vector kernels take it
    # from binary32 only, at memory speed).
    "round": ("x = np.random.default_rng(1).standard_normal(1 << 25)",
              "fpemu.round(x, 'e5m2', mode='sr-exact')"),
    "gemm": ("a = np.full((1024, 4096), 0x3F80, np.uint16)",
             "fpemu.gemm(a, a.T.copy(), a_fmt='bf16', acc='exact')"),
    "casgd": ("", "fpemu.casgd('synth:16384,256', recipe='I', s=1, P=16, outer=32000)"),
    "train": ("x, y = np.ones((20000, 64), np.float32), np.zeros(20000, np.float32)",
              "fpemu.train(x, y, x, y, model='mlp', hidden=256, classes=2, epochs=1000)"),
}
DELAY = 0.3  # seconds from the call's start to the signal


def child(setup, call):
    return textwrap.dedent("""
        import numpy as np, fpemu
        fpemu.set_num_threads(2)
        %s
        print("started", flush=True)
        try:
            %s
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """) % (setup, call)


@pytest.mark.parametrize("name", list(LONG_CALLS))
def test_ctrl_c_interrupts_a_long_call_within_half_a_second(name):
    p = subprocess.Popen([sys.executable, "-c", child(*LONG_CALLS[name])], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "started"
        time.sleep(DELAY)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        with selectors.DefaultSelector() as sel:
            sel.register(p.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout=5.0)
        answer = p.stdout.readline().strip() if ready else "no answer within 5 s"
        latency = time.monotonic() - sent
        assert answer == "interrupted"
        assert latency < 0.5, "%s answered SIGINT after %.3f s" % (name, latency)
        assert p.wait(timeout=10) == 0
    finally:
        p.kill()
        p.wait()


def test_other_python_threads_run_while_a_call_works():
    counted = []
    stop = threading.Event()

    def count():
        n = 0
        while not stop.is_set():
            n += 1
        counted.append(n)

    x = np.ones(1 << 22, np.float32)
    start = time.monotonic()
    fpemu.round(x[:1 << 10], "bf16", mode="sr-exact")
    worker = threading.Thread(target=count)
    worker.start()
    try:
        fpemu.round(x, "bf16", mode="sr-exact")  # C++ only, for a few tenths of a second
    finally:
        stop.set()
        worker.join()
    # With the GIL held, the counter could only run in the switch intervals before and after.
    elapsed = time.monotonic() - start
    assert counted[0] > 100_000, "the counting thread ran %d times in %.2f s" % (counted[0], elapsed)


def test_set_num_threads_changes_speed_only():
    before = fpemu.get_num_threads()
    x = np.random.default_rng(2).normal(size=1 << 18)
    a = fpemu.round(np.arange(64 * 48, dtype=np.float64).reshape(64, 48) / 7, "bf16")
    b = fpemu.round(np.arange(48 * 32, dtype=np.float64).reshape(48, 32) / 5, "bf16")
    results = []
    try:
        for n in (1, 3):
            fpemu.set_num_threads(n)
            assert fpemu.get_num_threads() == n
            results.append((fpemu.round(x, "e4m3fn", mode="sr", seed=4),
                            fpemu.gemm(a, b, a_fmt="bf16", acc="bf16")))
    finally:
        fpemu.set_num_threads(0)
    assert fpemu.get_num_threads() == before == os.cpu_count()
    for r1, r3 in zip(*results):
        np.testing.assert_array_equal(r1, r3)


def run_with(env_value):
    env = dict(os.environ, FPEMU_NUM_THREADS=env_value)
    return subprocess.run([sys.executable, "-c", "import fpemu; print(fpemu.get_num_threads())"], env=env,
                          capture_output=True, text=True)


def test_the_environment_variable_sets_the_thread_count_at_import():
    assert run_with("3").stdout.strip() == "3"
    assert run_with("0").stdout.strip() == str(os.cpu_count())
    bad = run_with("three")
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines()[-1] == (
        "ImportError: FPEMU_NUM_THREADS = 'three' (valid: 1..4096, or 0 for every hardware thread)")
