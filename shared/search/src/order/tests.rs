use super::*;
use catalog::query::{Indexed, ListParams, ListQuery};
use catalog::records::{Card, DatasetSummary};
use proptest::prelude::*;

/// An order as its store would hold it: the chunks, in order.
#[derive(Default)]
struct Stored {
    chunks: Vec<Chunk>,
}

impl Stored {
    fn bounds(&self) -> Vec<Bounds> {
        self.chunks.iter().filter_map(Chunk::bounds).collect()
    }

    /// One move, through the same steps as the writer: the touched chunks, edited, spliced in.
    fn apply(&mut self, seq: u64, old: Option<&Key>, new: Key) -> Result<(), OrderError> {
        let bounds = self.bounds();
        let loaded = touched(&bounds, old, &new)
            .into_iter()
            .map(|i| (i, self.chunks[i].clone()))
            .collect();
        let replacements = edit(&bounds, loaded, seq, old, new)?;
        for (i, chunks) in replacements.into_iter().rev() {
            if self.chunks.is_empty() {
                self.chunks = chunks;
            } else {
                self.chunks.splice(i..=i, chunks);
            }
        }
        Ok(())
    }

    fn flat(&self) -> Vec<u64> {
        self.chunks.iter().flat_map(|c| c.seqs()).collect()
    }
}

/// The order a sort of the whole list gives.
fn sorted(keys: &BTreeMap<u64, Key>) -> Vec<u64> {
    let mut all: Vec<(&Key, u64)> = keys.iter().map(|(s, k)| (k, *s)).collect();
    all.sort();
    all.into_iter().map(|(_, s)| s).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Datasets join and move (new download counts) one change at a time, past several
    /// splits: the chunks always hold the order a sort of the whole list gives, each at most
    /// MAX_CHUNK long and in key ranges that do not overlap.
    #[test]
    fn moves_one_at_a_time_keep_the_order_a_whole_sort_gives(
        counts in proptest::collection::vec(0u64..400, 2500..5000),
        moves in proptest::collection::vec((0usize..5000, 0u64..400), 0..300),
    ) {
        let mut stored = Stored::default();
        let mut keys: BTreeMap<u64, Key> = BTreeMap::new();
        for (i, count) in counts.iter().enumerate() {
            let seq = i as u64 + 1;
            let key = Key::Downloads(*count, seq);
            stored.apply(seq, None, key.clone()).unwrap();
            keys.insert(seq, key);
        }
        for (pick, count) in moves {
            let seq = (pick % counts.len()) as u64 + 1;
            let new = Key::Downloads(count, seq);
            let old = keys.insert(seq, new.clone());
            stored.apply(seq, old.as_ref(), new).unwrap();
        }
        prop_assert_eq!(stored.flat(), sorted(&keys));
        prop_assert!(stored.chunks.len() > 1, "it split");
        prop_assert!(stored.chunks.iter().all(|c| c.len() <= MAX_CHUNK && !c.is_empty()));
        let bounds = stored.bounds();
        for (i, chunk) in stored.chunks.iter().enumerate() {
            let last = &chunk.entries.last().unwrap().0;
            if let Some(next) = bounds.get(i + 1) {
                prop_assert!(*last < next.lower);
            }
        }
    }

    /// Any page, either way, of an order in chunks is the same slice of the whole order.
    #[test]
    fn a_page_read_from_its_covering_chunks_is_that_slice_of_the_order(
        lens in proptest::collection::vec(1u32..40, 1..12),
        offset in 0u64..500,
        limit in 0u64..60,
        descending in any::<bool>(),
    ) {
        let mut next = 0u32;
        let chunks: Vec<Vec<u32>> = lens
            .iter()
            .map(|len| (0..*len).map(|_| { next += 1; next * 7 % 1009 }).collect())
            .collect();
        let mut whole: Vec<u64> = chunks.iter().flatten().map(|s| u64::from(*s)).collect();
        if descending {
            whole.reverse();
        }
        let expected: Vec<u64> = whole
            .iter()
            .skip(offset as usize)
            .take(limit as usize)
            .copied()
            .collect();
        let range = covering(&lens, descending, offset, limit);
        let read: Vec<Vec<u32>> = chunks[range.clone()].to_vec();
        prop_assert_eq!(page(&lens, range.clone(), &read, descending, offset, limit), expected.clone());
        // Only the chunks the page needs: each holds one of its ranks
        prop_assert!(range.len() <= expected.len().max(1));
        if expected.is_empty() {
            prop_assert!(range.is_empty());
        }
    }

    /// Every order's key sorts as the listing sorts: by name (whatever the case) then slug,
    /// by update then position, by downloads then position.
    #[test]
    fn keys_sort_as_the_listing_sorts(
        rows in proptest::collection::vec(("[a-cA-C ]{0,3}", 0i64..5, 0u32..3, 0u64..3), 1..40),
    ) {
        let entries: Vec<Indexed> = rows
            .iter()
            .enumerate()
            .map(|(i, (name, secs, nanos, downloads))| {
                Indexed::new(summary(i as u64 + 1, name, *secs, *nanos, *downloads))
            })
            .collect();
        for (sort, field) in [(Sorted::Name, "name"), (Sorted::Updated, "updated"), (Sorted::Downloads, "downloads")] {
            for direction in ["asc", "desc"] {
                let raw = format!("{field}:{direction}");
                let query = ListQuery::parse(ListParams { sort: Some(&raw), ..ListParams::default() }).unwrap();
                let mut listed: Vec<&Indexed> = entries.iter().collect();
                listed.sort_by(|a, b| query.order(a, b));
                let by_listing: Vec<u64> = listed.iter().map(|e| e.summary.seq).collect();
                let mut stored = Stored::default();
                for e in &entries {
                    stored.apply(e.summary.seq, None, sort.key(&e.summary)).unwrap();
                }
                let mut by_order = stored.flat();
                if direction == "desc" {
                    by_order.reverse();
                }
                prop_assert_eq!(by_order, by_listing, "{}", raw);
            }
        }
    }
}

fn summary(seq: u64, name: &str, secs: i64, nanos: u32, downloads: u64) -> DatasetSummary {
    DatasetSummary {
        slug: catalog::input::Slug::parse(&format!("d{}", 100 - seq)).unwrap(),
        id: uuid::Uuid::nil(),
        card: Card {
            name: name.to_owned(),
            description: None,
            category: "c".into(),
            tags: Vec::new(),
            license: "l".into(),
            access_level: Default::default(),
        },
        size: 0,
        row_count: 0,
        column_count: 0,
        keyless_until: None,
        updated_at: chrono::DateTime::from_timestamp(secs, nanos).unwrap(),
        keyless: false,
        downloads,
        files: None,
        seq,
    }
}

#[test]
fn matches_are_walked_in_the_order_either_way() {
    let chunks = vec![vec![5, 2], vec![9], vec![1, 7, 5]];
    let matches = [7, 5, 9, 4, 7];
    assert_eq!(walk(&chunks, false, &matches), [5, 9, 7], "5 once");
    assert_eq!(walk(&chunks, true, &matches), [7, 9, 5]);
    assert_eq!(walk(&chunks, true, &[]), Vec::<u64>::new());
}

#[test]
fn a_dataset_not_at_its_recorded_place_is_reported_not_moved_twice() {
    let mut stored = Stored::default();
    stored.apply(1, None, Key::Downloads(3, 1)).unwrap();
    stored.apply(2, None, Key::Downloads(5, 2)).unwrap();
    let wrong = Key::Downloads(4, 1);
    assert_eq!(
        stored.apply(1, Some(&wrong), Key::Downloads(9, 1)),
        Err(OrderError::Missing(1))
    );
    assert_eq!(stored.flat(), [1, 2], "nothing changed");
}

#[test]
fn a_build_cuts_chunks_that_later_changes_can_grow_and_stored_bytes_read_back() {
    let entries: Vec<(Key, u64)> = (1..=4000u64)
        .rev()
        .map(|s| (Key::Name(format!("n{:05}", s % 977), format!("s{s}")), s))
        .collect();
    let chunks = build(entries.clone());
    assert_eq!(
        chunks.iter().map(Chunk::len).collect::<Vec<_>>(),
        [BUILD_CHUNK, BUILD_CHUNK, 4000 - 2 * BUILD_CHUNK]
    );
    let mut expected = entries;
    expected.sort();
    let flat: Vec<u64> = chunks.iter().flat_map(|c| c.seqs()).collect();
    assert_eq!(flat, expected.iter().map(|(_, s)| *s).collect::<Vec<_>>());
    for chunk in &chunks {
        assert_eq!(&Chunk::from_keys_bytes(&chunk.keys_bytes()).unwrap(), chunk);
        let (bits, packed) = chunk.seqs_packed().unwrap();
        assert_eq!(bits, 12, "4000 fits in 12 bits");
        assert_eq!(packed.len(), (chunk.len() * 12).div_ceil(8));
        let seqs: Vec<u64> = seqs_from(&packed, chunk.len(), bits)
            .unwrap()
            .into_iter()
            .map(u64::from)
            .collect();
        assert_eq!(seqs, chunk.seqs().collect::<Vec<_>>());
    }
    assert_eq!(Chunk::from_keys_bytes(b"nope"), Err(OrderError::Damaged));
    assert_eq!(seqs_from(&[1, 2, 3], 1, 0), Err(OrderError::Damaged));
    assert_eq!(seqs_from(&[1, 2, 3], 2, 12), Ok(vec![0x201, 0x030]));
    assert_eq!(
        seqs_from(&[1, 2, 3], 3, 12),
        Err(OrderError::Damaged),
        "12 bits short"
    );
    assert_eq!(seqs_from(&[1, 2, 3], 2, 33), Err(OrderError::Damaged));
    // Positions written before they were packed: 4 bytes each
    assert_eq!(seqs_from(&[7, 0, 0, 0, 1, 1, 0, 0], 2, 0), Ok(vec![7, 257]));
    let far = Chunk::new(vec![(Key::Downloads(0, 1 << 33), 1 << 33)]);
    assert_eq!(far.seqs_packed(), Err(OrderError::TooFar(1 << 33)));
}

#[test]
fn a_range_read_under_another_manifest_gives_no_page_rather_than_another() {
    let lens = [3u32, 3, 3];
    let seqs = vec![vec![7u32, 8, 9]];
    // Ranks 6..8 are in the third chunk; the second was read (a writer split it meanwhile)
    assert_eq!(page(&lens, 1..2, &seqs, false, 6, 2), Vec::<u64>::new());
    // A range past the manifest's chunks
    assert_eq!(page(&lens, 5..6, &seqs, true, 0, 2), Vec::<u64>::new());
    // The right one
    assert_eq!(page(&lens, 2..3, &seqs, false, 6, 2), [7, 8]);
    assert_eq!(page(&lens, 2..3, &seqs, true, 0, 2), [9, 8]);
}

proptest! {
    /// Packed positions read back as they were, whatever their width.
    #[test]
    fn packed_positions_read_back(seqs in proptest::collection::btree_set(0u64..=u64::from(u32::MAX), 0..300)) {
        let chunk = Chunk::new(seqs.iter().map(|s| (Key::Downloads(0, *s), *s)).collect());
        let (bits, packed) = chunk.seqs_packed().unwrap();
        let largest = seqs.iter().max().copied().unwrap_or(0);
        prop_assert_eq!(u64::from(bits), u64::from((64 - largest.leading_zeros()).max(1)));
        prop_assert_eq!(packed.len(), packed_len(seqs.len(), bits));
        let back = seqs_from(&packed, seqs.len(), bits).unwrap();
        prop_assert_eq!(back.into_iter().map(u64::from).collect::<Vec<_>>(), chunk.seqs().collect::<Vec<_>>());
    }
}
