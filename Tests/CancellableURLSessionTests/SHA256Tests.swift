import Foundation
import TestSupport
import Testing

@testable import CancellableURLSession

/// The library's SHA-256: NIST's test vectors, one-shot against fed in pieces, and its hexadecimal form (one function
/// writes every digest the library compares, whole files and pieces).
@Suite struct SHA256Tests {
    @Test func everyByteIsWrittenAsTwoLowercaseHexadecimalDigits() {
        let bytes = (0...255).map(UInt8.init)
        #expect(SHA256.hex(bytes) == bytes.map { String(format: "%02x", $0) }.joined())
        #expect(SHA256.hex([]) == "")
        #expect(
            SHA256.hexDigest(of: Data("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
    }

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func sha256MatchesTheNISTVectors(message: String, digest: String) {
        var hash = SHA256()
        hash.update(Data(message.utf8))
        #expect(hash.finalize().map { String(format: "%02x", $0) }.joined() == digest)
    }

    @Test func sha256OfOneMillionAMatchesTheNISTVector() async {
        let digest = await onAThreadOfItsOwn {
            var hash = SHA256()
            hash.update(ResumableDownloadTests.millionA)
            return hash.finalize().map { String(format: "%02x", $0) }.joined()
        }
        #expect(digest == ResumableDownloadTests.millionADigest)
    }

    @Test func sha256FedInPiecesMatchesOneShot() {
        let message = DownloadIntegrationTests.payload(1_000)
        var oneShot = SHA256()
        oneShot.update(message)
        let digest = oneShot.finalize()
        for split in [0, 1, 55, 56, 63, 64, 65, 127, 128, 999, 1_000] {
            var hash = SHA256()
            hash.update(message.prefix(split))
            hash.update(message.dropFirst(split).prefix(7))
            hash.update(message.dropFirst(split + 7))
            #expect(hash.finalize() == digest, "split at \(split)")
        }
    }
}
