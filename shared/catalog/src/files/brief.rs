//! A version of many files in brief, as answers show it: the metadata's and the list's `files`
//! object (docs/api.md), kept on the list entries so that the list, DCAT and the site know a
//! dataset's splits without reading its dataset item.

use serde::{Deserialize, Serialize};

use super::{PartitionColumn, Summary};

/// How many files, the partition columns with their types, and each split's files, rows and
/// bytes (empty when the files have no split).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilesBrief {
    pub count: u64,
    pub partition_columns: Vec<PartitionColumn>,
    pub splits: Vec<SplitBrief>,
}

/// One split, in brief.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitBrief {
    pub name: String,
    pub files: u64,
    pub row_count: u64,
    pub size: u64,
}

impl FilesBrief {
    pub fn of(summary: &Summary) -> Self {
        Self {
            count: summary.files,
            partition_columns: summary.partitions.clone(),
            splits: summary
                .splits
                .iter()
                .map(|s| SplitBrief {
                    name: s.name.as_str().to_owned(),
                    files: s.files,
                    row_count: s.rows,
                    size: s.bytes,
                })
                .collect(),
        }
    }

    /// The bytes it holds on the heap, for the caches that weigh what they keep.
    pub fn heap_bytes(&self) -> usize {
        self.partition_columns
            .iter()
            .map(|c| c.name.capacity() + std::mem::size_of::<PartitionColumn>())
            .chain(
                self.splits
                    .iter()
                    .map(|s| s.name.capacity() + std::mem::size_of::<SplitBrief>()),
            )
            .sum()
    }
}
