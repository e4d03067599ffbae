"""One real Dask cluster of 2 worker processes for the sweep tests (starting one costs seconds)."""

import logging

import pytest


@pytest.fixture(scope="session")
def dask_client():
    """A ``distributed.Client`` of a LocalCluster with 2 single-threaded worker processes."""
    import dask
    from distributed import Client, LocalCluster

    # A task whose worker dies is given up at once (not retried on 3 more workers), so the
    # test of a lost point costs one worker restart.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, silence_logs=logging.ERROR)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()
