#!/usr/bin/env python3
"""Checks Weir's answers to the 22 TPC-H queries of benches/tpch/ against DuckDB's, value by value.

usage: tpchgen-cli parquet -s 0.1 --output-dir=DIR
       python3 benches/check_tpch.py DIR path/to/weir [THREADS]
Loads DIR/<table>.parquet into both engines, runs each query in DuckDB and in
the weir binary (CSV output), and compares the rows in order: numbers within
1e-6 relative, everything else as text. Prints OK or the first difference per
query and exits non-zero unless all match.
"""
import duckdb, glob, os, subprocess, csv, io, decimal, sys
ROOT=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
D=sys.argv[1]; WEIR=sys.argv[2]; THREADS=sys.argv[3] if len(sys.argv) > 3 else "2"; T=['region','nation','supplier','customer','part','partsupp','orders','lineitem']
con=duckdb.connect()
for t in T: con.execute(f"create table {t} as select * from '{D}/{t}.parquet'")
setup=''.join(f"CREATE TABLE {t} AS SELECT * FROM '{D}/{t}.parquet';\n" for t in T)
def norm(v):
    if v is None: return None
    if isinstance(v,(decimal.Decimal,float,int)) and not isinstance(v,bool): return float(v)
    return str(v)
def close(a,b):
    if a is None or b is None: return a is b
    if isinstance(a,float) and isinstance(b,float): return abs(a-b) <= 1e-6*max(1,abs(b))
    return a==b
ok=0
for f in sorted(glob.glob(os.path.join(ROOT, 'benches/tpch/q*.sql'))):
    q=open(f).read()
    exp=[tuple(norm(v) for v in r) for r in con.execute(q).fetchall()]
    open(os.path.join(D, 'query.sql'),'w').write(setup+q)
    p=subprocess.run([WEIR,'--threads',THREADS,'--format','csv','-f',os.path.join(D, 'query.sql')],capture_output=True,text=True)
    rows=list(csv.reader(io.StringIO(p.stdout)))[1:]
    def conv(s,e):
        if s=='' or s=='NULL': return None
        if isinstance(e,float):
            try: return float(s)
            except: return s
        return s
    got=[tuple(conv(s,e) for s,e in zip(r, exp[0] if exp else r)) for r in rows]
    same = len(got)==len(exp) and all(len(g)==len(e) and all(close(a,b) for a,b in zip(g,e)) for g,e in zip(got,exp))
    ok+=same
    print(os.path.basename(f), 'OK' if same else f'DIFF rows {len(got)} vs {len(exp)} {p.stderr[:200]} {got[:1]} {exp[:1]}')
print(ok,'of 22 match')
sys.exit(0 if ok == 22 else 1)
