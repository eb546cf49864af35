#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the quickstart experiment on the
# real clips. Writes results/quickstart.sqlite, plots under results/quickstart/ and the HTML report under
# results/quickstart-report/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product enclab
# Start fresh, so the database holds this quickstart's 40 runs only.
rm -rf results/quickstart.sqlite results/quickstart.sqlite-wal results/quickstart.sqlite-shm results/quickstart results/quickstart-report
.build/release/enclab run experiments/quickstart.json
.build/release/enclab report --db results/quickstart.sqlite --out results/quickstart-report
echo "quickstart: $(sqlite3 results/quickstart.sqlite "SELECT count(*) FROM runs WHERE experiment = 'quickstart' AND status = 'done'") done runs in results/quickstart.sqlite; plots in results/quickstart/; report in results/quickstart-report/index.html"
