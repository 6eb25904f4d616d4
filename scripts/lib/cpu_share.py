"""CPU seconds used per process name between two snapshots, and the machine's idle time: what a benchmark's
numbers were limited by. `python3 cpu_share.py snap FILE` writes a snapshot; `python3 cpu_share.py diff FILE`
prints what was used since it (yona-server, postgres, nginx, idle, everything else)."""
import json
import os
import sys

TICKS = os.sysconf("SC_CLK_TCK")


def snapshot():
    per_name = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if not f.read(1):
                    continue  # a kernel thread: they come and go, and their pids are reused
            with open(f"/proc/{pid}/stat") as f:
                raw = f.read()
        except OSError:
            continue
        name = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2:].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime
        key = "yona-server" if name.startswith("yona-server") or name.startswith("NIO-") or "qos" in name else name
        key = "postgres" if key.startswith("postgres") else key
        key = "nginx" if key.startswith("nginx") else key
        per_name[f"{pid}:{key}"] = ticks
    with open("/proc/stat") as f:
        cpu = f.readline().split()[1:]
    return {"procs": per_name, "idle": int(cpu[3]) + int(cpu[4]), "total": sum(int(x) for x in cpu[:8])}


def diff(before, after):
    used = {}
    for key, ticks in after["procs"].items():
        name = key.split(":", 1)[1]
        used[name] = used.get(name, 0) + ticks - before["procs"].get(key, 0)
    total = after["total"] - before["total"]
    idle = after["idle"] - before["idle"]
    wanted = ["yona-server", "postgres", "nginx"]
    parts = [f"{name} {used.get(name, 0) / TICKS:.2f}" for name in wanted]
    other = sum(v for k, v in used.items() if k not in wanted)
    top = sorted(((v, k) for k, v in used.items() if k not in wanted and v > 0), reverse=True)[:3]
    parts.append(f"other {other / TICKS:.2f} ({', '.join(f'{k} {v / TICKS:.2f}' for v, k in top)})")
    parts.append(f"idle {idle / TICKS:.2f} of {total / TICKS:.2f}")
    return "CPU seconds: " + ", ".join(parts)


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "snap":
        json.dump(snapshot(), open(path, "w"))
    else:
        print(diff(json.load(open(path)), snapshot()))
