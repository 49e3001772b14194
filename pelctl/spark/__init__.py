"""Fleet-wide PEL analytics: ``pelctl snapshot`` (pyarrow only) and ``pelctl analyze`` (Spark).

Importing this package loads neither pyspark nor pyarrow; :func:`register` does.
"""

from __future__ import annotations

from typing import Any


def register(spark: Any) -> None:
    """Register the ``pel`` data source on a SparkSession (classic or Spark Connect)."""
    from pelctl.spark.source import PelDataSource

    spark.dataSource.register(PelDataSource)


__all__ = ["register"]
