"""``spark-submit`` entry point: the pelctl CLI as a Spark application.

::

    spark-submit --master yarn --deploy-mode client \\
        "$(python -c 'import pelctl.cli.spark_job as j; print(j.__file__)')" \\
        analyze hdfs:///pel/snapshots -o json > fleet.json

Under spark-submit the master, deploy mode, resources and every ``--conf`` come from
spark-submit (pelctl adds only UTC and quiet progress); ``--master`` is refused. See
docs/spark.md.
"""

from __future__ import annotations

from pelctl.cli.main import main

if __name__ == "__main__":
    main()
