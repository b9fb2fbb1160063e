#!/usr/bin/env python3
"""soakstat.py: the soak's verdicts and figures from what its parts wrote.

  soakstat.py RESULTS CHURN EVENTS PERIOD_MS TRIES_MS LIFETIME_MS

RESULTS: dnsload client lines "START_MS LABEL LAT_US CONNECT PREVIOUS NAME ADDR AGE"
(labels: pN resident, refN resolve-mode reference, ct the conntrack abuser,
cW-I a churn pod). CHURN: "NAME T0 T1 ADD_RC DEL_RC TABLES_LEFT" per cycle.
EVENTS: "phase NAME T0 T1", "restart T0 T1", "tamper LABEL T0 T1" (ms).

Prints "KEY COUNT DETAIL" lines for the rows (the first offending line as
the detail), then the latency table. Added latency per answer is the
answer's latency less the reference pods' median in the same phase (the
resolver's own round trip): p50/p99/max over the residents' answers."""
import sys

# After the agent is back, a held answer's retry and the records' pickup.
RESTART_SLACK_MS = 3000


def load(path):
    try:
        return [l.split() for l in open(path) if l.strip()]
    except FileNotFoundError:
        return []


def pct(v, p):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]


def main():
    results, churn, events = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
    period, tries_ms, life_ms = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    phases = [(e[1], int(e[2]), int(e[3])) for e in events if e[0] == "phase"]
    restarts = [(int(e[1]), int(e[2]) + RESTART_SLACK_MS) for e in events if e[0] == "restart"]
    tampers = {}
    for e in events:
        if e[0] == "tamper":
            tampers.setdefault(e[1], []).append((int(e[2]), int(e[3])))

    def overlaps(a, b, wins):
        return any(a <= w1 and w0 <= b for w0, w1 in wins)

    def query_span(r):  # from the first send to the answer (or the last try)
        t, lat = int(r[0]), int(r[2])
        return t, t + (lat // 1000 if lat >= 0 else tries_ms)

    def tampered(r, extra=0):  # the query or its connects (2 s each at most)
        a, b = query_span(r)
        return overlaps(a - extra, b + 4000, tampers.get(r[1], []))

    def learning(r):
        return not r[1].startswith("ref")

    out = []

    def row(key, bad, total):
        out.append("%s %d %d %s" % (key, len(bad), total, " ".join(bad[0]) if bad else "-"))

    answered = [r for r in results if learning(r) and r[3] != "noanswer" and not tampered(r)]
    row("connect_after_answer", [r for r in answered if r[3] != "ok"], len(answered))
    # A reconnect counts while the previous answer's address has 5 s of its
    # lifetime left (the client's own lost answers can make it older).
    prev = [r for r in results if learning(r) and r[4] != "-" and 0 <= int(r[7]) <= life_ms - 5000
            and not tampered(r, int(r[7]))]
    row("reconnect_previous", [r for r in prev if r[4] != "ok"], len(prev))
    resid = [r for r in results if r[1].startswith("p") and not tampered(r)]
    kept = [r for r in resid if not overlaps(*query_span(r), restarts)]
    row("lost_outside_restarts", [r for r in kept if r[3] == "noanswer"], len(kept))
    bad_churn = [c for c in churn if c[3] != "0" or c[4] != "0"]
    excused = [c for c in bad_churn if overlaps(int(c[1]), int(c[2]), restarts)]
    row("churn_cni", [c for c in bad_churn if c not in excused], len(churn))
    out.append("churn_excused %d %d -" % (len(excused), len(churn)))
    row("churn_tables_left", [c for c in churn if c[5] != "0"], len(churn))
    churn_first = [r for r in results if r[1].startswith("c") and r[3] != "noanswer"]
    out.append("churn_answers %d %d -" % (len(churn_first), len(churn)))
    print("\n".join(out))

    print("figures")
    print("  %-9s %8s %6s %9s %9s %10s %10s %10s" % ("phase", "answers", "lost", "ref p50", "ref p99", "added p50",
                                                      "added p99", "added max"))
    for name, t0, t1 in phases:
        # A query belongs to a phase when it started and ended inside it.
        inph = [r for r in results if t0 <= query_span(r)[0] and query_span(r)[1] <= t1
                and not overlaps(*query_span(r), restarts)]
        ref = [int(r[2]) for r in inph if r[1].startswith("ref") and int(r[2]) >= 0]
        res = [r for r in inph if r[1].startswith("p") and not tampered(r)]
        lat = [int(r[2]) for r in res if int(r[2]) >= 0]
        base = pct(ref, 50) if ref else 0
        add = [(x - base) / 1000 for x in lat]
        lost = sum(1 for r in res if r[3] == "noanswer")
        print("  %-9s %8d %6d %7.2fms %7.2fms %8.2fms %8.2fms %8.2fms" % (
            name, len(lat), lost, base / 1000, pct(ref, 99) / 1000 if ref else float("nan"), pct(add, 50),
            pct(add, 99), max(add) if add else float("nan")))


if __name__ == "__main__":
    main()
