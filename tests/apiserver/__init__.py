"""A Kubernetes API server for tests (not collected by pytest: no test_ modules here).

    from tests.apiserver import ApiServer, Store
    store = Store(); store.put_all(objects)
    with ApiServer(store) as server:
        server.add_token("t0k3n", "auditor")
        ...

See server.py for what it serves, store.py for server-set metadata and pagination, defaults.py for
the defaults it adds, faults.py for the fault knobs.
"""

from tests.apiserver.faults import Fault, Faults
from tests.apiserver.pki import CertificateAuthority, KeyPair
from tests.apiserver.server import ApiServer
from tests.apiserver.store import Store
from tests.apiserver.wire import RequestRecord, User

__all__ = [
    "ApiServer",
    "CertificateAuthority",
    "Fault",
    "Faults",
    "KeyPair",
    "RequestRecord",
    "Store",
    "User",
]
