//! The statistics of a staged object read by ranged GETs (`catalog_stats::remote`), against a
//! small HTTP server on loopback answering them as S3 does, slowly (each GET waits
//! [`DELAY`]), and logging each: the statistics are those of the file on disk, each byte of a
//! column chunk is fetched once a pass and no GET runs past a chunk's end, the footer is
//! fetched once for every reader, several GETs are in flight at once, and every GET is
//! conditioned on the ETag.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use catalog_stats::remote::{ReadCounts, RemoteObject, PIECE_MAX, TAIL};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};

/// How long the server takes to answer a GET.
const DELAY: Duration = Duration::from_millis(15);
const ETAG: &str = "\"the-etag\"";

/// One GET answered: its range, and whether it was conditioned on the ETag.
#[derive(Debug, Clone, Copy)]
struct Get {
    start: u64,
    end: u64,
    if_match: bool,
}

/// Serves `object` to ranged GETs on a loopback port; the GETs, and the most at once.
struct Server {
    port: u16,
    gets: Arc<Mutex<Vec<Get>>>,
    most: Arc<AtomicUsize>,
}

fn serve(object: Arc<Vec<u8>>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let gets = Arc::new(Mutex::new(Vec::new()));
    let most = Arc::new(AtomicUsize::new(0));
    let now = Arc::new(AtomicUsize::new(0));
    let (logged, most_in) = (gets.clone(), most.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (object, gets, most, now) =
                (object.clone(), logged.clone(), most_in.clone(), now.clone());
            std::thread::spawn(move || answer(stream, &object, &gets, &most, &now));
        }
    });
    Server { port, gets, most }
}

/// Answers the requests of one connection, one after another.
fn answer(
    stream: TcpStream,
    object: &[u8],
    gets: &Mutex<Vec<Get>>,
    most: &AtomicUsize,
    now: &AtomicUsize,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let (mut range, mut if_match) = (None, None);
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            match name.to_ascii_lowercase().as_str() {
                "range" => range = value.trim().strip_prefix("bytes=").map(str::to_owned),
                "if-match" => if_match = Some(value.trim().to_owned()),
                _ => {}
            }
        }
        let size = object.len() as u64;
        let (start, last) = range
            .and_then(|r| {
                let (a, b) = r.split_once('-')?;
                Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?))
            })
            .unwrap_or((0, size - 1));
        let last = last.min(size - 1);
        let at_once = now.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(at_once, Ordering::SeqCst);
        std::thread::sleep(DELAY);
        let body = &object[start as usize..=last as usize];
        let head = format!(
            "HTTP/1.1 206 Partial Content\r\ncontent-length: {}\r\ncontent-range: bytes \
             {start}-{last}/{size}\r\netag: {ETAG}\r\n\r\n",
            body.len()
        );
        gets.lock().unwrap().push(Get {
            start,
            end: last + 1,
            if_match: if_match.as_deref() == Some(ETAG),
        });
        now.fetch_sub(1, Ordering::SeqCst);
        if out.write_all(head.as_bytes()).is_err() || out.write_all(body).is_err() {
            return;
        }
    }
}

/// A file of three columns in row groups of 250,000 rows: integers and floats spread over a
/// few MiB a chunk (more than one piece), and short text.
fn parquet_file(path: &std::path::Path) -> Vec<u8> {
    let rows = 600_000usize;
    let spread = |i: usize| (i as u64).wrapping_mul(2_654_435_761) % 1_000_000_007;
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "id",
            Arc::new(Int64Array::from_iter_values(
                (0..rows).map(|i| spread(i) as i64),
            )),
        ),
        (
            "x",
            Arc::new(Float64Array::from_iter(
                (0..rows).map(|i| (i % 50 != 7).then(|| spread(i + 1) as f64 / 1_000.0)),
            )),
        ),
        (
            "name",
            Arc::new(StringArray::from_iter_values(
                (0..rows).map(|i| format!("n{}", i % 40)),
            )),
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_size(250_000)
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    std::fs::read(path).unwrap()
}

fn client(port: u16) -> aws_sdk_s3::Client {
    use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(format!("http://127.0.0.1:{port}"))
        .force_path_style(true)
        .credentials_provider(Credentials::new("key", "secret", None, None, "test"))
        .http_client(catalog_aws::aws::http_client(
            catalog_aws::aws::RootCertificates::Platform,
        ))
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

#[test]
fn a_staged_objects_statistics_fetch_each_chunk_byte_once_a_pass_with_several_gets_in_flight() {
    let dir = std::env::temp_dir().join(format!("staged-reads-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.parquet");
    let bytes = Arc::new(parquet_file(&path));
    let size = bytes.len() as u64;
    let server = serve(bytes.clone());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let counts = Arc::new(ReadCounts::default());
    let object = RemoteObject {
        s3: client(server.port),
        bucket: "data".into(),
        key: "staging/s/a.parquet".into(),
        size,
        etag: Some(ETAG.into()),
        handle: runtime.handle().clone(),
        counts: counts.clone(),
    };
    // The footers, then the statistics of every column, as a publish in place reads them.
    let scanned = catalog_stats::scan_files(std::slice::from_ref(&object)).unwrap();
    let remote = catalog_stats::summarize_files(std::slice::from_ref(&object)).unwrap();
    let local = catalog_stats::summarize_files(std::slice::from_ref(&path)).unwrap();
    assert_eq!(remote, local, "the statistics of the file on disk");
    assert_eq!(scanned.files[0].row_count, 600_000);
    assert_eq!(remote.passes, 1, "every column listed in one pass");

    // Where the column chunks are.
    let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let metadata = reader.metadata();
    let mut chunks: Vec<(u64, u64)> = Vec::new();
    for g in 0..metadata.num_row_groups() {
        for chunk in metadata.row_group(g).columns() {
            let (start, len) = chunk.byte_range();
            chunks.push((start, start + len));
        }
    }
    chunks.sort_unstable();
    let chunk_bytes: u64 = chunks.iter().map(|(s, e)| e - s).sum();
    assert!(chunks.iter().any(|(s, e)| e - s > PIECE_MAX / 2));
    let gets = server.gets.lock().unwrap().clone();
    assert!(gets.iter().all(|g| g.if_match), "every GET names the ETag");
    // One GET of the tail for the footer, however many readers opened the object (the
    // footer scan's, then the pass's): every other GET lies within one column chunk.
    let (tail, inside): (Vec<Get>, Vec<Get>) = gets.iter().partition(|g| g.end == size);
    assert_eq!(tail.len(), 1, "{tail:?}");
    assert_eq!(tail[0].start, size - TAIL.min(size));
    for get in &inside {
        assert!(
            chunks.iter().any(|(s, e)| *s <= get.start && get.end <= *e),
            "{get:?} crosses a column chunk's bounds"
        );
        assert!(get.end - get.start <= PIECE_MAX);
    }
    // Each byte of every chunk once: the GETs within chunks cover them without overlap.
    let mut covered: Vec<(u64, u64)> = inside.iter().map(|g| (g.start, g.end)).collect();
    covered.sort_unstable();
    assert!(
        covered.windows(2).all(|w| w[0].1 <= w[1].0),
        "a byte fetched twice"
    );
    let fetched: u64 = covered.iter().map(|(s, e)| e - s).sum();
    assert_eq!(fetched, chunk_bytes, "every chunk's bytes, once");
    assert_eq!(counts.requests(), gets.len() as u64);
    assert_eq!(counts.bytes(), fetched + (tail[0].end - tail[0].start));
    // The next pieces fetched while the decoder reads: several GETs at once.
    assert!(
        server.most.load(Ordering::SeqCst) >= 3 && counts.most_in_flight() >= 3,
        "at most {} GETs at once ({} counted)",
        server.most.load(Ordering::SeqCst),
        counts.most_in_flight()
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_read_of_what_there_is_stops_at_its_column_chunks_end() {
    use catalog_stats::StatsInput;
    use parquet::file::reader::ChunkReader;
    use std::io::Read;
    let dir = std::env::temp_dir().join(format!("staged-reads-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.parquet");
    let bytes = Arc::new(parquet_file(&path));
    let server = serve(bytes.clone());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let object = RemoteObject {
        s3: client(server.port),
        bucket: "data".into(),
        key: "staging/s/a.parquet".into(),
        size: bytes.len() as u64,
        etag: Some(ETAG.into()),
        handle: runtime.handle().clone(),
        counts: Arc::new(ReadCounts::default()),
    };
    let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let (start, len) = reader.metadata().row_group(0).column(0).byte_range();
    let end = start + len;
    // 4 KiB asked from 10 bytes before the first chunk's end: those 10 bytes, then the next
    // chunk's from its start, each fetched within its chunk (a block from there, before).
    let remote = object.open().unwrap();
    let mut read = remote.get_read(end - 10).unwrap();
    let mut buf = vec![0u8; 4096];
    let n = read.read(&mut buf).unwrap();
    assert_eq!(&buf[..n], &bytes[(end - 10) as usize..end as usize]);
    let n = read.read(&mut buf).unwrap();
    assert!(n > 0);
    assert_eq!(&buf[..n], &bytes[end as usize..end as usize + n]);
    // Every GET but the tail's within one chunk (the column's next chunks fetched ahead).
    let chunks: Vec<(u64, u64)> = (0..reader.metadata().num_row_groups())
        .flat_map(|g| reader.metadata().row_group(g).columns().to_vec())
        .map(|c| (c.byte_range().0, c.byte_range().0 + c.byte_range().1))
        .collect();
    let gets = server.gets.lock().unwrap().clone();
    let data: Vec<&Get> = gets
        .iter()
        .filter(|g| g.end != bytes.len() as u64)
        .collect();
    assert!(
        data.iter().any(|g| (g.start, g.end) == (end - 10, end)),
        "{gets:?}"
    );
    for get in data {
        assert!(
            chunks.iter().any(|(s, e)| *s <= get.start && get.end <= *e),
            "{get:?} crosses a chunk's bounds"
        );
    }
    std::fs::remove_dir_all(dir).ok();
}
