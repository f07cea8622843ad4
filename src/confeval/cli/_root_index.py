"""Each top-level command's name, help and short help, as the whole app builds them.
Written by ``confeval.cli._index.write_index``; never edited by hand."""

COMMANDS = (('score',
  'Score a confidence column against correctness: ECE, MCE, Brier, AUROC, AUARC, PRR, '
  'RCE.',
  None),
 ('agreement',
  "Agreement of a judge's scores with reference scores (correlations, accuracy, bias).",
  None),
 ('compare',
  'Compare models (judges, measures) scored by one suite on the same items: every '
  'metric\n'
  "per model with its interval and rank interval, every pair's difference and p-value "
  '(exact\n'
  'McNemar for 0/1 outcomes such as accuracy and coverage, DeLong for AUROC on shared '
  'labels,\n'
  'a paired bootstrap over items otherwise), Holm-adjusted, and group letters (models '
  'no\n'
  'adjusted test separates share a letter). One input per model; items are aligned by\n'
  "--id-col. The suite's own scoring options (in [brackets]: the suites that have "
  'them) are\n'
  'given as to its score command. --out writes run.json, metrics.json, report.html '
  '(forest\n'
  'plots, p-value heatmaps) and compare.csv.',
  None),
 ('guarantee',
  'A certified threshold: answer when the confidence is at least t, with the '
  'selective\n'
  'error (errors among answered items) at most --target with probability at least 1 - '
  '--delta\n'
  'over the calibration draw (--method ltt: Learn then Test, Hoeffding-Bentkus '
  'p-values,\n'
  "fixed-sequence, Bonferroni or Holm over the thresholds; sgr: Geifman & El-Yaniv's "
  'binary\n'
  'search), or the expected share answered and wrong at most --target (crc: conformal '
  'risk\n'
  'control). --batch M promises the error of a new batch of M items instead of the\n'
  "population's (--batch test: the test half's). One result per input. --out writes\n"
  'run.json, metrics.json and policy.json (one per input: policy-<k>.json), which\n'
  '`confeval guarantee apply POLICY RECORDS` applies.',
  None),
 ('import',
  "Write another tool's file as confeval records (the layout `confeval SUITE score` "
  'reads\n'
  'with no column flag), to look at before scoring; unusable samples are counted, not\n'
  'written. Every lm-eval filter and Inspect scorer is written, each row naming its '
  'own,\n'
  'unless --filter or --scorer names one.',
  None),
 ('rerun',
  'Repeat a run folder from its run.json alone (every input checked by SHA-256; a live '
  'run\n'
  'rescored from its records, no model call) and compare with its metrics.json.',
  None),
 ('simulate',
  'Write SIMULATED records of a judge behaviour (seeded; documented in '
  'confeval.simulate).',
  None),
 ('demo',
  'Run every available evaluation on simulated judges (and, with the local extra, live '
  'on\n'
  'the embedded model); write a run folder and report.html.',
  None),
 ('report',
  'Render RUN_DIR/metrics.json into a self-contained HTML report (exit status 3, each\n'
  'problem named on stderr, when a chart or a section could not be shown).',
  None),
 ('cache', 'Show or clear the response cache.', None),
 ('perturb', 'Alias of `confeval steps perturb`.', None),
 ('run',
  'Alias of `confeval SUITE run ...`: every argument after SUITE goes to that '
  'command,\n'
  "whose options are the suite's own (see `confeval SUITE run --help`).",
  None),
 ('sets', 'Conformal prediction sets for multiple-choice answers.', None),
 ('intervals', 'Conformal intervals and label sets for judge scores.', None),
 ('steps', 'Confidence of process judges (ConfProBench: CRS, CSS, CCS).', None),
 ('measures', 'Which confidence measure of an LLM can be trusted (MCQA-Eval).', None),
 ('diagnose', 'Can a model tell why a reasoning chain is wrong (MMErroR).', None),
 ('judge',
  'Can this judge be trusted? `confeval judge mean FILE`: the mean human score of all '
  "items, corrected for the judge's error (PPI, PPI++); `judge reruns`: how much its "
  'scores change when asked again; `judge position`, `judge length`: whether it '
  'prefers the first answer shown, or the longer one; `judge card`: all of it on one '
  'page, what the judge can be trusted for.',
  None))
