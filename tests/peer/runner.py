# SPDX-License-Identifier: MIT
"""runner.py - runs CPython's own socket tests and records each case.

    python3 runner.py OUT MODULE [MODULE...]

Each test case's outcome goes to OUT as one line "ID<TAB>OUTCOME<TAB>SECONDS",
written and flushed as soon as the case ends, and a line "ID<TAB>started"
before it begins, so that a run cut short by a time limit still says which
case hung.  OUTCOME is ok, fail, error, skip, xfail or xpass.  Cases listed
in EXCLUDE never run; the reason says why they cannot run on this machine
with or without the library.
"""
import sys
import time
import unittest

# Case ids (prefixes) left out of every run, bare and under the library alike.
EXCLUDE = {
    # A VSOCK stream test blocks forever in accept() on machines with the
    # vsock module loaded but no hypervisor transport: bare, not the library.
    "test.test_socket.ThreadedVSOCKSocketStreamTest":
        "hangs bare in accept() without a vsock transport",
}


class Recorder(unittest.TextTestResult):
    """Writes one line per case to the output file as it finishes."""

    def __init__(self, out, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.out = out
        self.t0 = 0.0

    def note(self, test, outcome):
        # Errors and skips of setUpClass come as a stand-in whose id
        # ("setUpClass (module.Class)") has a blank; ids are one word here.
        secs = time.monotonic() - self.t0
        if not isinstance(test, unittest.TestCase):
            secs = 0.0
        test_id = test.id().replace(" ", "")
        self.out.write("%s\t%s\t%.3f\n" % (test_id, outcome, secs))
        self.out.flush()

    def startTest(self, test):
        self.out.write("%s\tstarted\n" % test.id())
        self.out.flush()
        self.t0 = time.monotonic()
        super().startTest(test)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.note(test, "ok")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.note(test, "fail")

    def addError(self, test, err):
        super().addError(test, err)
        self.note(test, "error")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.note(test, "skip")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.note(test, "xfail")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.note(test, "xpass")


def excluded(test_id):
    return any(test_id.startswith(p) for p in EXCLUDE)


def prune(suite):
    """Returns suite without the excluded cases."""
    kept = unittest.TestSuite()
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            kept.addTest(prune(t))
        elif not excluded(t.id()):
            kept.addTest(t)
    return kept


def main():
    out = open(sys.argv[1], "a", buffering=1)
    loader = unittest.defaultTestLoader
    for name in sys.argv[2:]:
        suite = prune(loader.loadTestsFromName(name))
        runner = unittest.TextTestRunner(
            stream=sys.stderr, verbosity=1,
            resultclass=lambda *a, **k: Recorder(out, *a, **k))
        runner.run(suite)
    return 0


if __name__ == "__main__":
    sys.exit(main())
