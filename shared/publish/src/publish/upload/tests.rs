use super::*;

#[test]
fn a_parts_checksum_is_the_base64_of_its_sha256() {
    // SHA-256("abc"), as S3's x-amz-checksum-sha256 writes it
    assert_eq!(
        part_checksum(b"abc"),
        "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
    );
}

fn temp_file(bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("digest-{}", uuid::Uuid::new_v4()));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_small_files_checksum_is_its_whole_sha256() {
    let path = temp_file(b"abc");
    let digest = Digest::of_file(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(digest.size, 3);
    assert_eq!(
        digest.sha256,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert!(digest.parts.is_empty());
    assert_eq!(
        digest.s3_checksum(),
        "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
    );
}

#[test]
fn a_large_files_checksum_is_the_composite_of_its_parts() {
    // Two full parts and a short third, of distinct bytes.
    let mut bytes = vec![1u8; PART_SIZE];
    bytes.extend(vec![2u8; PART_SIZE]);
    bytes.extend(b"tail");
    let path = temp_file(&bytes);
    let digest = Digest::of_file(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let chunks: Vec<&[u8]> = bytes.chunks(PART_SIZE).collect();
    assert_eq!(digest.parts.len(), 3);
    for (part, chunk) in digest.parts.iter().zip(&chunks) {
        assert_eq!(part.as_slice(), Sha256::digest(chunk).as_slice());
    }
    assert_eq!(digest.sha256, hex::encode(Sha256::digest(&bytes)));
    let mut of_parts = Vec::new();
    for chunk in &chunks {
        of_parts.extend_from_slice(&Sha256::digest(chunk));
    }
    assert_eq!(
        digest.s3_checksum(),
        format!(
            "{}-3",
            aws_smithy_types::base64::encode(Sha256::digest(&of_parts))
        )
    );
}

#[test]
fn a_file_of_exactly_one_part_goes_up_in_one_put() {
    let path = temp_file(&vec![7u8; PART_SIZE]);
    let digest = Digest::of_file(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(digest.parts.is_empty(), "{} parts", digest.parts.len());
    assert_eq!(
        digest.s3_checksum(),
        catalog_aws::s3::checksum_sha256(&digest.sha256).unwrap()
    );
}
