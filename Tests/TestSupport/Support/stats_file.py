"""What the test servers in this folder share: their counters, written atomically as JSON for the tests."""
import json
import os


def save(path, stats, lock):
    """Writes `stats` to `path` (temporary file + rename, under `lock`); no path, nothing."""
    if not path:
        return
    with lock:
        with open(path + ".tmp", "w") as f:
            json.dump(stats, f)
        os.replace(path + ".tmp", path)
