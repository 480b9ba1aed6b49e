from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.audit.fleet.fleet_data import PushedFleet, push_fleet
from tests.prometheus import Prometheus
from tests.pushgateway import Pushgateway


@pytest.fixture(scope="session")
def fleet(
    scraped: tuple[Pushgateway, Prometheus], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PushedFleet]:
    """The fleet of fleet_data.py, two nights pushed and scraped (once per session)."""
    pgw, prom = scraped
    yield push_fleet(pgw, prom, tmp_path_factory.mktemp("fleet"))
