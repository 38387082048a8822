#!/usr/bin/env python3
"""Mutation check for heapest's interval tests (issue 10).

Applies each mutation below, one at a time, to a copy of the repository and
runs the statistical and unit tests with the golden-file tests skipped (a
golden file regenerated with -update would accept any output). Every
mutation must make at least one of those tests fail. Prints a Markdown
table; exits 1 when a mutation survives.

    python3 scripts/mutation-check.py            # all mutations
    python3 scripts/mutation-check.py exact-plus1 # some, by name

Takes about 40 s per mutation on 2 cores (the coverage study in sim/ runs each
time). Needs ../shared beside the repository, as the tests do.
"""
import os, shutil, subprocess, sys, tempfile, time

# (name, file, old text, new text, what it breaks)
MUTATIONS = [
    ("exact-plus1", "ci/methods.go",
     "nHi := s + 1 + upper(alpha/2, s+1, p)", "nHi := s + upper(alpha/2, s+1, p)",
     "--method exact loses the .NET window's +1"),
    ("auto-upper-s", "ci/methods.go",
     "r.Hi = (s + negBinUpperQuantile(alpha/2, s+1, p)) * unit", "r.Hi = (s + negBinUpperQuantile(alpha/2, s, p)) * unit",
     "auto's upper bound at s samples instead of s+1"),
    ("approach2-estimate", "unbias/calc.go",
     "st = ci.Stats{Estimate: ci.OffsetEstimate(g.Count, p, g.Offset),", "st = ci.Stats{Estimate: ci.OffsetEstimate(g.Count, p, g.Offset) * 1.05,",
     "the calculator's Approach 2 estimate off by 5%"),
    ("report-approach2", "unbias/contribute.go",
     "out.Offset, out.HasOffset, out.OpenEnd = rec.Offset, true, true",
     "out.Offset, out.HasOffset, out.OpenEnd = rec.Offset, true, true\n\t\tout.Estimate = ci.OffsetEstimate(out.Samples, 1/rec.Rate, rec.Offset)",
     "report prints Approach 2's estimate instead of Horvitz–Thompson's"),
    ("confidence-ignored", "ci/interval.go",
     "alpha := 1 - confidence", "alpha := 0.05",
     "--confidence ignored"),
    ("gamma-narrow", "ci/methods.go",
     "r.Hi = math.Max(y, gammaQuantile(m*m/w, w/m, alpha/2, true))", "r.Hi = math.Max(y, y+0.8*(gammaQuantile(m*m/w, w/m, alpha/2, true)-y))",
     "gamma interval's upper half 20% narrower"),
    ("gamma-narrow-both", "ci/methods.go",
     "		r.Hi = math.Max(y, gammaQuantile(m*m/w, w/m, alpha/2, true))\n\t}\n\treturn r",
     "		r.Hi = math.Max(y, gammaQuantile(m*m/w, w/m, alpha/2, true))\n\t}\n\tr.Lo, r.Hi = y-0.8*(y-r.Lo), y+0.8*(r.Hi-y)\n\treturn r",
     "gamma interval 20% narrower on both sides"),
    ("var-halved", "unbias/calc.go",
     "st = ci.Stats{Estimate: g.Count * unit / p, Var: g.Count * unit * unit * (1 - p) / (p * p),",
     "st = ci.Stats{Estimate: g.Count * unit / p, Var: 0.5 * g.Count * unit * unit * (1 - p) / (p * p),",
     "HT variance halved"),
    ("present-lower-fixedpoint", "ci/methods.go",
     "	lo, hi := -1.0, y0 // holds(hi); lo is below every y that holds",
     "	if y0 > 0 && holds(y0-1) {\n\t\ty0--\n\t}\n\treturn y0\n\tlo, hi := -1.0, y0 // holds(hi); lo is below every y that holds",
     "present-row lower bound one allocation high (the old fixed point)"),
    ("no-hidden-floor", "unbias/calc.go",
     "st.MaxWeight = max(st.MaxWeight, g.Rate)", "st.MaxWeight = max(st.MaxWeight, 0)",
     "no allowance for unsampled sizes beside large allocations"),
    ("no-present-gamma", "ci/interval.go",
     "r.Lo = s.presentGammaLower(alpha)", "r.Lo = r.Lo + 0",
     "gamma lower bound not conditioned on the row's presence"),
    ("no-present-dotnet", "ci/interval.go",
     "if s.offsetApplies() && m == Auto {", "if s.offsetApplies() && m == Auto && false {",
     ".NET rows' lower bound not conditioned on presence"),
    ("bias-ignored", "ci/interval.go",
     "hi.Estimate = s.Estimate + s.Bias", "hi.Estimate = s.Estimate",
     "a raw mixed line's upper end not widened"),
    ("size-class-single", "unbias/contribute.go",
     "if z == 0 && n == 1 {", "if z == 0 && n >= 1 {",
     "a raw line's average size taken as its one size"),
    ("not-conditional", "ci/interval.go",
     "if s.Conditional && r.Method != MethodNone && !s.Complete {", "if false && s.Conditional && r.Method != MethodNone && !s.Complete {",
     "object counts of sampled sizes called exact"),
    ("large-missed-ignored", "ci/interval.go",
     "	w := s.wholeWeight()\n\tif w <= s.MaxWeight {", "	w := s.wholeWeight()\n\tif true || w <= s.MaxWeight {",
     "a missed large allocation not allowed for"),
    ("estimate-outside", "ci/interval.go",
     "r.Lo, r.Hi = math.Min(r.Lo, r.Estimate), math.Max(r.Hi, r.Estimate)", "r.Lo, r.Hi = r.Lo, r.Hi",
     "an interval that does not hold its estimate"),
    ("forks-independent", "report/report.go",
     "\t\tb.table.Correlate(k)", "\t\t_ = k",
     "forked workers' dumps taken for independent samples"),
    ("correlate-var", "ci/stats.go",
     "\ts.Var *= k\n", "\ts.Var *= 1\n",
     "correlated inputs' variance not widened"),
    ("one-jvm-summed", "fleet/process.go",
     "if live && src.Heap != \"\" {", "if false && src.Heap != \"\" {",
     "recordings of one JVM summed for their live objects"),
    ("allocator-own-kept", "aggregate/table.go",
     "own = own || info[b2i(drop == 0)][stack[drop]].own", "own = false",
     "tcmalloc's own memory (HEAP_PROFILE_MMAP) counted as the program's"),
]

PACKAGES = ["./ci", "./unbias", "./sim", "./report", "./compare", "./gate", "./aggregate",
            "./parse/nettrace", "./parse/memray", "./parse/pprof", "./cmd/heapest"]
# Golden-file tests: their files would be regenerated with -update, so
# they do not count as catching a mutation.
SKIP = "TestCLI|TestGolden|TestReadmeExamples|TestMergeDocExamples|TestTableFits|TestCIRecipe"


def main(names):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shared = os.path.join(os.path.dirname(root), "shared")
    work = tempfile.mkdtemp(prefix="heapest-mutate-")
    repo = os.path.join(work, "repo")
    shutil.copytree(root, repo, ignore=shutil.ignore_patterns(".git"))
    if os.path.isdir(shared):
        os.symlink(shared, os.path.join(work, "shared"))
    rows, survivors = [], 0
    for name, path, old, new, what in MUTATIONS:
        if names and name not in names:
            continue
        f = os.path.join(repo, path)
        orig = open(f).read()
        if orig.count(old) != 1:
            print(f"mutation {name}: {path} has {orig.count(old)} copies of its text (want 1)", file=sys.stderr)
            sys.exit(2)
        open(f, "w").write(orig.replace(old, new))
        start = time.time()
        p = subprocess.run(["go", "test", "-count=1", "-skip", SKIP] + PACKAGES, cwd=repo,
                           capture_output=True, text=True)
        open(f, "w").write(orig)
        failed = sorted({l.split()[2] for l in p.stdout.splitlines() if l.startswith("--- FAIL: ")})
        build = "build failed" in p.stdout or "[setup failed]" in p.stdout
        caught = bool(failed) and not build
        survivors += not caught
        shown = ", ".join(failed[:4]) + (" …" if len(failed) > 4 else "")
        if build:
            shown = "BUILD FAILED: " + p.stdout[-300:].replace("\n", " ")
        rows.append(f"| {name} | {what} | {'caught' if caught else '**survived**'} | {shown or '-'} |")
        print(f"{name}: {'caught' if caught else 'SURVIVED'} in {time.time()-start:.0f} s", file=sys.stderr)
    shutil.rmtree(work)
    print("| mutation | what it breaks | result | tests that failed |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    sys.exit(1 if survivors else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
