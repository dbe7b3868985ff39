"""moto's server (DynamoDB and Cognito for the local stack), with DynamoDB made to hold
steady under many clients. Run with the venv's Python, with moto_server's arguments:

    python dev/moto_server.py -H 127.0.0.1 -p 8000

Two changes to moto 5.2.5's DynamoDB, both about how requests are applied, none about what
they answer:

1. **One DynamoDB request at a time.** DynamoDB applies each request atomically and in
   isolation. moto's server answers requests on many threads that interleave inside one
   request: a TransactWriteItems that fails restores a copy of the whole table taken when it
   started, undoing whatever other requests wrote meanwhile (a black-box run saw the kept
   orders and list marks of concurrent publishes undone this way). A lock around each DynamoDB
   request gives DynamoDB's per-request atomicity. Cognito's requests are not held by it.
2. **A transaction backs up only the items it writes.** moto deep-copies every table a
   TransactWriteItems touches, for every transaction, to restore it on failure. With the text
   index's shards in the datasets table, a local stack under six concurrent clients grew to
   21.7 GB in half an hour (each concurrent transaction held its own copy of the table). Here a
   transaction keeps a copy of each item it names, and on failure puts those back: the same
   outcome, at the cost of the transaction's items instead of the table's.

docs/development.md ("The local stack's DynamoDB") has the figures before and after.
"""

import copy
import sys
import threading

import moto.dynamodb.models as dynamodb_models
import moto.server
from moto.dynamodb.models import DynamoDBBackend

DYNAMODB_TARGET = "DynamoDB_20120810."

_one_at_a_time = threading.Lock()
_original_transact = DynamoDBBackend.transact_write_items


class _NoTableCopies:
    """Stands for the `copy` module inside moto's DynamoDB backend while a transaction runs:
    its copies of whole tables (and of the item an update returns, which a transaction does not
    use) are the objects themselves. Safe because DynamoDB requests run one at a time."""

    @staticmethod
    def deepcopy(value, memo=None):
        return value


def _key_of(table, op_type, op):
    """The key of the item a transaction's operation names, or None."""
    if op_type == "Put":
        item = op.get("Item", {})
        key = {table.hash_key_attr: item.get(table.hash_key_attr)}
        if table.range_key_attr is not None:
            key[table.range_key_attr] = item.get(table.range_key_attr)
        return None if None in key.values() else key
    return op.get("Key")


def _restore(backend, table_name, key, item):
    """Puts an item back as it was before the transaction (or removes it if it was absent)."""
    if item is None:
        backend.delete_item(table_name, key)
    else:
        backend.put_item(table_name, item.to_json()["Attributes"], overwrite=True)


def transact_write_items(self, transact_items):
    backups = []
    for entry in transact_items:
        try:
            op_type, op = next(iter(entry.items()))
            table = self.tables.get(op.get("TableName"))
            key = table and _key_of(table, op_type, op)
            if key:
                current = self.get_item(table.name, key)
                backups.append((table.name, key, copy.deepcopy(current)))
        except Exception:  # moto's own code reports a malformed operation
            continue
    dynamodb_models.copy = _NoTableCopies
    try:
        return _original_transact(self, transact_items)
    except Exception:
        for table_name, key, item in reversed(backups):
            _restore(self, table_name, key, item)
        raise
    finally:
        dynamodb_models.copy = copy


def _one_dynamodb_request_at_a_time(app):
    def serve(environ, start_response):
        if environ.get("HTTP_X_AMZ_TARGET", "").startswith(DYNAMODB_TARGET):
            with _one_at_a_time:
                # The whole answer is built under the lock (moto's answers are not streamed).
                return list(app(environ, start_response))
        return app(environ, start_response)

    return serve


def main(argv):
    DynamoDBBackend.transact_write_items = transact_write_items
    run_simple = moto.server.run_simple

    def run_serialised(host, port, app, **options):
        return run_simple(host, port, _one_dynamodb_request_at_a_time(app), **options)

    moto.server.run_simple = run_serialised
    moto.server.main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
