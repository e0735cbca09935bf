#!/usr/bin/env python3
"""Bookkeeping for Benchmarks/ingest.sh (standard library only):

  ingest_report.py time OUT -- COMMAND...     runs COMMAND (its output passed through), writes
                                             {"seconds", "cpu_s", "maxrss_kib", "rc"} to OUT (wall
                                             time, the child's user + system CPU, its peak RSS, from
                                             wait4), exits with COMMAND's status
  ingest_report.py record RESULTS ITEM...    appends one JSON line to RESULTS, merged from the ITEMs:
                                             @FILE (a JSON object) or name=value (JSON, else a string)
  ingest_report.py table RESULTS [--markdown FILE] [--target 0.9] [--rss-target-mb 300] [--cores N]
                                             the markdown table (medians over rounds; peak RSS: the
                                             largest), then notes per round, on stdout (and in FILE);
                                             with --cores, a warning when prepare kept fewer than 80 %
                                             of them busy (the machine was shared)

Rows of RESULTS: row = tus | draft | curl | prepare | prepare_thumbs, with count, ok, bytes, seconds, and
the row's extras (rss_kib, cpu figures, latency_s, statuses, failed, stored, server_5xx, thumbnails).
The CPU-side limit the verdict uses is the prepare row that does the server's work: prepare_thumbs (the
same thumbnails the server makes on arrival, the files at the server's storage keys, so the same folders)
when it was run, else prepare.
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import time


def run_timed(out, command):
    began = time.monotonic()
    child = subprocess.Popen(command)
    for number in (signal.SIGINT, signal.SIGTERM):  # passed on, so that a timeout or Ctrl-C stops the command too
        signal.signal(number, lambda received, _: child.send_signal(received))
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - began
    rc = os.waitstatus_to_exitcode(status)
    with open(out, "w") as file:
        json.dump({"seconds": round(seconds, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                   "maxrss_kib": usage.ru_maxrss, "rc": rc}, file)
    return rc


def record(results, items):
    line = {}
    for item in items:
        if item.startswith("@"):
            with open(item[1:]) as file:
                line.update(json.load(file))
        else:
            name, _, value = item.partition("=")
            try:
                line[name] = json.loads(value)
            except ValueError:
                line[name] = value
    with open(results, "a") as file:
        file.write(json.dumps(line) + "\n")


def table(results, markdown, target, rss_target_mb, cores):
    rows = [json.loads(line) for line in open(results) if line.strip()]
    by = {name: [r for r in rows if r["row"] == name] for name in ("tus", "draft", "curl", "prepare", "prepare_thumbs")}
    # The CPU-side limit for the server's job: prepare making the same thumbnails, when that row ran.
    work = "prepare_thumbs" if by["prepare_thumbs"] else "prepare"
    named = {"prepare": "prepare", "prepare_thumbs": "prepare (same work)", "curl": "curl"}

    def rate(r, what):
        if not r.get("seconds") or not r.get("ok"):
            return 0.0
        return (r["bytes"] / 1e6 if what == "mb" else r["ok"]) / r["seconds"]

    def median(name, what):
        values = [rate(r, what) for r in by[name]]
        return statistics.median(values) if values else None

    def rss(name):
        values = [r.get("rss_kib") or r.get("maxrss_kib") for r in by[name]]
        values = [v for v in values if v]
        return max(values) * 1024 / 1e6 if values else None

    rounds = max((r.get("round", 1) for r in rows), default=0)
    curl_pps = median("curl", "photos")
    limits = [(v, n) for v, n in ((curl_pps, "curl"), (median(work, "photos"), named[work])) if v]
    slower, slower_name = min(limits) if limits else (None, None)
    out = []
    out.append(f"| protocol | what | MB/s | photos/s | × machine limit | peak RSS | verdict |")
    out.append("|---|---|---|---|---|---|---|")
    described = {
        "tus": ("tus 1.0", "`photoprep serve`, 100 concurrent uploads (POST + one PATCH each), photos/s normalised"),
        "draft": ("IETF draft (interop 6)", "`photoprep serve`, 100 concurrent uploads (one POST each), photos/s normalised"),
    }
    for name in ("tus", "draft"):
        if not by[name]:
            continue
        protocol, what = described[name]
        count = by[name][0]["count"]
        what = what.replace("100", str(count))
        mb, pps, peak = median(name, "mb"), median(name, "photos"), rss(name)
        # Each round's serve against the same round's limits (run back to back), then the median: steadier
        # on a shared machine than a ratio of medians.
        def ratio(limit):
            values = [rate(r, "photos") / limit(r["round"]) for r in by[name] if limit(r["round"])]
            return statistics.median(values) if values else None
        def limit_of(row):
            return lambda n: next((rate(r, "photos") for r in by[row] if r["round"] == n), None)
        def slower_of(n):
            values = [v for v in (limit_of("curl")(n), limit_of(work)(n)) if v]
            return min(values) if values else None
        cells, verdicts = [], []
        for row in ("prepare_thumbs", "prepare", "curl"):
            value = ratio(limit_of(row)) if by[row] else None
            if value is not None:
                cells.append(f"{value:.2f} × {named[row]}")
        versus = ratio(slower_of)
        if versus is not None:
            verdicts.append(f"{'met' if versus >= target else 'missed'} ({versus:.1%} of the slower limit, {slower_name}; target ≥ {target:.0%})")
        if peak is not None:
            verdicts.append(f"RSS {'met' if peak < rss_target_mb else 'missed'} (target < {rss_target_mb:g} MB)")
        errors = sum(r.get("server_5xx", 0) for r in by[name])
        if errors:
            verdicts.append(f"**{errors} server 5xx answer(s)**")
        failures = sum(r["count"] - r["ok"] for r in by[name])
        if failures:
            verdicts.append(f"**{failures} upload(s) failed**")
        out.append(f"| {protocol} | {what} | {mb:.1f} | {pps:.1f} | {', '.join(cells) or '—'} | "
                   f"{f'{peak:.0f} MB' if peak is not None else '—'} | {'; '.join(verdicts) or '—'} |")
    if by["curl"]:
        count = by["curl"][0]["count"]
        peak = rss("curl")
        out.append(f"| HTTP/1.1 PUT | machine limit 1: `curl --parallel` ({count} at once) → plain receiver (Python, "
                   f"writes + `fsync`), photos/s received | {median('curl', 'mb'):.1f} | {curl_pps:.1f} | reference | "
                   f"{f'{peak:.0f} MB (receiver)' if peak is not None else '—'} | "
                   f"{'the slower limit' if slower_name == 'curl' else 'limit'} |")
    for row in ("prepare_thumbs", "prepare"):
        if not by[row]:
            continue
        count = by[row][0]["count"]
        peak = rss(row)
        jobs = by[row][0].get("jobs", 2)
        thumbnails = f" --thumbnails {by[row][0].get('thumbnails')}" if row == "prepare_thumbs" else ""
        files = f"the same {count} files at the server's storage keys (its folders)" if row == "prepare_thumbs" else f"the same {count} files"
        role = ("the slower limit" if slower_name == named[row] else "limit") if row == work else \
            "reference only (makes none of the thumbnails and folders the server makes)"
        out.append(f"| — | machine limit 2{' (the same work)' if row == work else ''}: `photoprep prepare --jobs {jobs} --preset photo{thumbnails}`, "
                   f"{files} (MB/s of input) | {median(row, 'mb'):.1f} | {median(row, 'photos'):.1f} | reference | "
                   f"{f'{peak:.0f} MB' if peak is not None else '—'} | {role} |")
    out.append("")
    out.append(f"Medians of {rounds} round(s), interleaved (curl, prepare{', prepare (same work)' if by['prepare_thumbs'] else ''}, then tus and draft, alternating which goes first); × machine limit: the median of each "
               f"round's ratio of photos/s (the same photos in every row, so against curl it is also the ratio of MB/s); "
               f"peak RSS: the largest VmHWM (serve: read from /proc before stopping it; receiver likewise; prepare: "
               f"wait4's ru_maxrss). MB = 10^6 bytes.")
    # CPU per photo: what the rows cost, whatever else the machine was doing meanwhile.
    cost = {}
    for name, field in (("tus", "server_cpu_s"), ("draft", "server_cpu_s"), ("prepare", "cpu_s"), ("prepare_thumbs", "cpu_s")):
        values = [r[field] / r["ok"] * 1000 for r in by[name] if r.get(field) and r.get("ok")]
        if values:
            cost[name] = statistics.median(values)
    servers = [name for name in ("tus", "draft") if name in cost]
    if servers and work in cost:
        parts = [f"{named.get(name, name)} {ms:.1f} ms" for name, ms in cost.items()]
        ceilings = [f"{name} {cost[work] / cost[name]:.0%}" for name in servers]
        plain = ""
        if work != "prepare" and "prepare" in cost:
            plain = "; against plain prepare " + ", ".join(f"{name} {cost['prepare'] / cost[name]:.0%}" for name in servers)
        out.append("")
        out.append(f"CPU per photo (medians; the server process' user + system time, prepare's likewise): {', '.join(parts)}. "
                   f"With every core busy, serve's ceiling against {named[work]} is therefore {', '.join(ceilings)} of its rate{plain}.")
    busy = [r["cpu_s"] / r["seconds"] for r in by[work] if r.get("seconds") and r.get("cpu_s")]
    usable = min(cores, by[work][0].get("jobs", cores)) if by[work] and cores else 0
    if busy and usable and statistics.median(busy) < 0.8 * usable:
        out.append("")
        out.append(f"**The machine was shared**: prepare kept only {statistics.median(busy):.2f} of {usable} cores "
                   f"busy (median), so something else was running. A contended CPU favours the server (it has more threads "
                   f"than prepare's workers), so its ratio above is flattered; the CPU-per-photo ceiling is the steadier "
                   f"figure.")
    out.append("")
    out.append("Per round:")
    out.append("")
    for r in rows:
        name = r["row"]
        line = f"- round {r.get('round')}, {name}: {r['ok']}/{r['count']} in {r.get('seconds')} s — " \
               f"{rate(r, 'mb'):.1f} MB/s, {rate(r, 'photos'):.1f} photos/s"
        if name in ("tus", "draft"):
            used = r["server_cpu_s"] / r["seconds"] if r.get("seconds") else 0
            lat = r.get("latency_s", {})
            line += (f"; server CPU {r.get('server_cpu_s')} s ({used:.2f} cores busy), client CPU {r.get('client_cpu_s')} s; "
                     f"latency min {lat.get('min')} s (the first photo stored), p50 {lat.get('p50')} s, p90 {lat.get('p90')} s, max {lat.get('max')} s; "
                     f"stored {r.get('stored')}, 5xx {r.get('server_5xx')}; requests {r.get('statuses')}")
            if r.get("failed"):
                line += f"; failed: {r['failed'][:3]}{' …' if len(r['failed']) > 3 else ''}"
        elif name == "curl":
            used = (r.get("receiver_cpu_s", 0) + r.get("cpu_s", 0)) / r["seconds"] if r.get("seconds") else 0
            line += (f"; receiver CPU {r.get('receiver_cpu_s')} s, curl CPU {r.get('cpu_s')} s ({used:.2f} cores busy); "
                     f"answers {r.get('codes')}")
        elif name in ("prepare", "prepare_thumbs"):
            used = r["cpu_s"] / r["seconds"] if r.get("seconds") else 0
            line += f"; CPU {r.get('cpu_s')} s ({used:.2f} cores busy), exit {r.get('rc')}"
        out.append(line)
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if markdown:
        with open(markdown, "w") as file:
            file.write(text)


def main(argv):
    if len(argv) >= 3 and argv[0] == "time" and argv[2] == "--":
        return run_timed(argv[1], argv[3:])
    if len(argv) >= 2 and argv[0] == "record":
        record(argv[1], argv[2:])
        return 0
    if len(argv) >= 2 and argv[0] == "table":
        options = {"--markdown": None, "--target": "0.9", "--rss-target-mb": "300", "--cores": "0"}
        rest = argv[2:]
        while rest:
            if rest[0] not in options or len(rest) < 2:
                raise SystemExit(f"table: unknown option {rest[0]}")
            options[rest[0]] = rest[1]
            rest = rest[2:]
        table(argv[1], options["--markdown"], float(options["--target"]), float(options["--rss-target-mb"]), int(options["--cores"]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
