"""Reads a kreplay rocpd database with Python's own sqlite3 module and prints what it holds as
one JSON document, for the Rust tests to check against the run."""
import json
import sqlite3
import sys
import time


def main(path):
    # A plain connection, as a user opens the file: after a writer was killed in the middle of
    # a transaction, opening rolls the unfinished transaction back.
    con = sqlite3.connect(path)
    con.row_factory = sqlite3.Row
    q = lambda sql: [dict(r) for r in con.execute(sql)]
    uuid = con.execute("SELECT value FROM rocpd_metadata WHERE tag = 'uuid'").fetchone()[0]
    out = {
        "integrity": con.execute("PRAGMA integrity_check").fetchone()[0],
        "foreign_key_violations": len(con.execute("PRAGMA foreign_key_check").fetchall()),
        # Table names without the file's uuid suffix (rocprofv3's layout: `<table><uuid>`).
        "uuid": uuid,
        "tables": sorted(r[0].replace(uuid, "") for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")),
        "suffixed_tables": con.execute(f"SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd%{uuid}'").fetchone()[0],
        "boottime_now": time.clock_gettime_ns(time.CLOCK_BOOTTIME),
        "nodes": q('SELECT "id", "hostname" FROM rocpd_info_node'),
        "processes": q('SELECT "id", "pid", "ppid", "command", "start", "end" FROM rocpd_info_process'),
        "agents": q('SELECT "id", "pid", "type", "name", "logical_index" FROM rocpd_info_agent WHERE "type" = \'GPU\' ORDER BY "id"'),
        "cpu_agents": con.execute("SELECT COUNT(*) FROM rocpd_info_agent WHERE type = 'CPU'").fetchone()[0],
        "kernels": q('SELECT "id", "pid", "kernel_name", "display_name" FROM rocpd_info_kernel_symbol ORDER BY "id"'),
        "dispatches": q(
            'SELECT D."id", D."pid", D."tid", D."dispatch_id", D."queue_id", D."start", D."end", '
            'D."grid_size_x", D."workgroup_size_x", S."kernel_name", A."name" AS "agent_name", '
            'K."replayed", K."passes", K."skipped", K."declined_reason", K."store", K."bytes" AS "snapshot_bytes", '
            'K."restore_bytes", K."window_start", K."window_end" '
            'FROM rocpd_kernel_dispatch D '
            'JOIN rocpd_info_kernel_symbol S ON S."id" = D."kernel_id" '
            'JOIN rocpd_info_agent A ON A."id" = D."agent_id" '
            'LEFT JOIN rocpd_kreplay_dispatch K ON K."kernel_dispatch_id" = D."id" '
            'ORDER BY D."pid", D."dispatch_id"'
        ),
        "passes": q(
            'SELECT "kernel_dispatch_id", "replay_pass", "start", "end", "restore_ns", "restore_bytes" '
            'FROM rocpd_kreplay_pass ORDER BY "kernel_dispatch_id", "replay_pass"'
        ),
        "kernels_view_rows": con.execute("SELECT COUNT(*) FROM kernels").fetchone()[0],
        "kreplay_kernels_view_rows": con.execute("SELECT COUNT(*) FROM kreplay_kernels").fetchone()[0],
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
