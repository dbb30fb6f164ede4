import Foundation
import Testing

@testable import CancellableURLSession

/// SHA-256's hexadecimal form: one function writes every digest the library compares (whole files and pieces).
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
}
