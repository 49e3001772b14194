"""``pelctl exporter``: PEL metrics for Prometheus (docs/monitoring.md).

A surface over the command layer: :mod:`pelctl.core.monitor` reads each server; here are
the refresh loops (:mod:`~pelctl.exporter.loop`), the metrics a scrape reads
(:mod:`~pelctl.exporter.metrics`), the HTTP endpoint (:mod:`~pelctl.exporter.endpoint`)
with TLS and basic auth (:mod:`~pelctl.exporter.webconfig`), and the two ways to run it
(:mod:`~pelctl.exporter.run`: serve, or once)."""
