"""moto's server (DynamoDB and Cognito for the local stack), with DynamoDB made to hold
steady under many clients. Run with the venv's Python, with moto_server's arguments:

    python dev/moto_server.py -H 127.0.0.1 -p 8000

Three changes to moto 5.2.5's DynamoDB, about how requests are applied and what moto keeps,
none about what they answer:

1. **One DynamoDB request at a time.** DynamoDB applies each request atomically and in
   isolation. moto's server answers requests on many threads that interleave inside one
   request: a TransactWriteItems that fails restores a copy of the whole table taken when it
   started, undoing whatever other requests wrote meanwhile (a black-box run saw the kept
   orders and list marks of concurrent publishes undone this way). A lock around each DynamoDB
   request gives DynamoDB's per-request atomicity. Cognito's requests are not held by it.
2. **A transaction backs up only the items it writes.** moto deep-copies every table a
   TransactWriteItems touches, for every transaction, to restore it on failure: the time and
   memory of a transaction grow with the table, and (item 3) every copy was kept; a local stack
   under six concurrent clients grew to 21.7 GB in half an hour. Here a transaction keeps a
   copy of each item it names, and on failure puts those back: the same outcome, at the cost of
   the transaction's items instead of the table's.
3. **No record of every item ever made.** moto appends every instance of its models to a list
   on the class, for ever (its /moto-api/ dashboard reads it): every DynamoDB item, including
   the copies each Query, Scan and (as moto has it) each transaction's table copy makes. That
   list, not the tables, was what grew: 2.7 GB after 79 publishes in a minute with moto's own
   server, against a table of a few MB. DynamoDB's models keep none here.

MOTO_TRACE_MEMORY=1 makes SIGUSR1 print the live objects by type, and the items no table holds
with what holds them, to stderr (how item 3 was found).

docs/development.md ("The local stack's DynamoDB") has the figures before and after.
"""

import copy
import os
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


def _report_memory_on_sigusr1():
    """MOTO_TRACE_MEMORY=1: on SIGUSR1, prints to stderr the live objects by type (count and
    bytes, the 15 largest) and the threads alive, to find what holds moto's memory in a long
    run."""
    import collections
    import gc
    import signal

    def report(signum, frame):
        gc.collect()
        count, size = collections.Counter(), collections.Counter()
        for obj in gc.get_objects():
            name = type(obj).__name__
            count[name] += 1
            size[name] += sys.getsizeof(obj)
        print(f"threads: {threading.active_count()}, gc objects: {sum(count.values())}",
              file=sys.stderr)
        for name, n in size.most_common(15):
            print(f"  {name}: {count[name]} objects, {n / 2**20:.1f} MiB", file=sys.stderr)
        # Items no table holds, and what holds them.
        from moto.dynamodb.models import dynamodb_backends
        from moto.dynamodb.models.dynamo_type import Item

        stored = set()
        for account in dynamodb_backends.values():
            for backend in account.values():
                for table in backend.tables.values():
                    for value in table.items.values():
                        for item in value.values() if isinstance(value, dict) else [value]:
                            stored.add(id(item))
        orphans = [o for o in gc.get_objects() if isinstance(o, Item) and id(o) not in stored]
        print(f"items stored: {len(stored)}, held elsewhere: {len(orphans)}", file=sys.stderr)
        holders = collections.Counter()
        for orphan in orphans[:200]:
            for r in gc.get_referrers(orphan):
                if r is orphans:
                    continue
                name = type(r).__name__
                if isinstance(r, list):
                    up = []
                    for o in gc.get_referrers(r):
                        if o is orphans:
                            continue
                        label = type(o).__name__
                        if isinstance(o, dict):
                            label += str([k for k, v in o.items() if v is r][:2])
                            label += str([type(x).__name__ for x in gc.get_referrers(o)][:3])
                        up.append(label)
                    name += f" (len {len(r)}) held by {up[:3]}"
                if isinstance(r, dict):
                    owners = [type(o).__name__ for o in gc.get_referrers(r) if o is not orphans][:3]
                    name += f" held by {owners}"
                holders[name] += 1
        for name, n in holders.most_common(8):
            print(f"    held by {name}: {n}", file=sys.stderr)
        sys.stderr.flush()

    signal.signal(signal.SIGUSR1, report)


class _Untracked(list):
    """Stands for a model class's `instances_tracked`: keeps nothing."""

    def append(self, instance):
        pass


def _stop_tracking_dynamodb_instances():
    """moto appends every instance of its models to a list on the class, for ever (read only by
    its /moto-api/ dashboard): every DynamoDB item, including the copies each Query, Scan and
    transaction makes. In a long run that list is most of moto's memory."""
    from moto.core.base_backend import model_data

    for model in model_data["dynamodb"].values():
        model.instances_tracked = _Untracked()


def main(argv):
    if os.environ.get("MOTO_TRACE_MEMORY"):
        _report_memory_on_sigusr1()
    _stop_tracking_dynamodb_instances()
    DynamoDBBackend.transact_write_items = transact_write_items
    run_simple = moto.server.run_simple

    def run_serialised(host, port, app, **options):
        return run_simple(host, port, _one_dynamodb_request_at_a_time(app), **options)

    moto.server.run_simple = run_serialised
    moto.server.main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
