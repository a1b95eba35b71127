# The moto fork server of the acceptance tests (started by src/moto/fork_server.rs, once per test
# process). Starting moto costs about 2 CPU-seconds before it answers its first IAM call (imports,
# then the AWS managed policies IAM loads); this process pays that once: it builds moto's server
# application, answers one harmless call of each service the provider uses, then forks a server
# per test. Every server is a process of its own with its own copy of moto's state, so tests
# still never see each other's resources.
#
# Commands, one per line on standard input; each gets one line on standard output:
#   start KIND LOG  fork a server on 127.0.0.1 and an ephemeral port, its output appended to LOG
#                   (werkzeug's "Running on http://127.0.0.1:PORT" line tells the port);
#                   KIND is "plain" or "iam-enforcement". Answer: the server's pid.
#   alive PID       "yes" while that server runs, else "no".
#   stop PID        kill that server. Answer: "stopped".
# At the end of standard input (the test process ended, however it ended) every server still
# running is killed.
#
# Argument 1: the region the tests use. Argument 2: python run first (moto patches that make it
# behave as AWS does where a test depends on it).

import os
import signal
import sys
import traceback

exec(sys.argv[2])

os.environ["MOTO_PORT"] = "0"

from moto.server import DomainDispatcherApplication, create_backend_app  # noqa: E402
from werkzeug.serving import run_simple  # noqa: E402
from werkzeug.test import Client  # noqa: E402

REGION = sys.argv[1]
WARM_UP = (
    ("iam", "Action=ListRoles&Version=2010-05-08"),
    ("sts", "Action=GetCallerIdentity&Version=2011-06-15"),
    ("sqs", "Action=ListQueues"),
    ("ec2", "Action=DescribeInstanceTypes&Version=2016-11-15&MaxResults=5"),
)

app = DomainDispatcherApplication(create_backend_app)
app.debug = True
client = Client(app)
for service, query in WARM_UP:
    scope = f"testing/20260101/{REGION}/{service}/aws4_request"
    answer = client.get(
        "/?" + query,
        headers={"Authorization": f"AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders=host, Signature=x"},
    )
    if answer.status_code != 200:
        sys.exit(f"warm-up call to {service} answered {answer.status_code}: {answer.get_data(as_text=True)}")


def skip_signature_check():
    # IAM enforcement tests: moto identifies the caller by the access key and evaluates its
    # policies, but its SigV4 re-computation disagrees with aws-sdk-rust whenever a form body
    # holds a space, so it is skipped (see Moto::start_for_iam_enforcement).
    import moto.iam.access_control as ac

    ac.IAMRequestBase.check_signature = lambda self: None


def serve(kind, log):
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    if kind == "iam-enforcement":
        skip_signature_check()
    run_simple("127.0.0.1", 0, app, threaded=True)


# Servers that exit are reaped by the kernel (no zombies to wait for).
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
servers = set()
for line in sys.stdin:
    command, _, argument = line.rstrip("\n").partition(" ")
    if command == "start":
        kind, _, log = argument.partition(" ")
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                serve(kind, log)
            except BaseException:
                traceback.print_exc()
                sys.stderr.flush()
                status = 1
            os._exit(status)
        servers.add(pid)
        answer = str(pid)
    elif command == "alive":
        try:
            os.kill(int(argument), 0)
            answer = "yes"
        except ProcessLookupError:
            answer = "no"
    elif command == "stop":
        pid = int(argument)
        servers.discard(pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        answer = "stopped"
    else:
        answer = f"unknown command {command!r}"
    print(answer, flush=True)

for pid in servers:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
