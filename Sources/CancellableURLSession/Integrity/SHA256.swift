import Foundation

/// SHA-256 (FIPS 180-4), fed incrementally: what ``DownloadIntegrity`` checks a finished download with.
///
/// The library's own, so that integrity checks work the same on Linux, where CryptoKit does not exist, and need no
/// dependency. Checked against the NIST test vectors in the tests.
struct SHA256 {
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    private var state: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    /// Bytes not yet hashed: less than one 64-byte block.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    init() {
        pending.reserveCapacity(64)
    }

    /// Hashes `bytes` after everything fed so far.
    mutating func update(_ bytes: some DataProtocol) {
        for region in bytes.regions {
            region.withUnsafeBytes { update($0.bindMemory(to: UInt8.self)) }
        }
    }

    private mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        length &+= UInt64(bytes.count)
        var start = 0
        if !pending.isEmpty {
            let taken = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<taken])
            start = taken
            guard pending.count == 64 else { return }
            pending.withUnsafeBufferPointer { compress($0) }
            pending.removeAll(keepingCapacity: true)
        }
        let whole = (bytes.count - start) / 64 * 64
        compress(UnsafeBufferPointer(rebasing: bytes[start..<start + whole]))
        start += whole
        pending.append(contentsOf: bytes[start...])
    }

    /// The digest of everything fed: 32 bytes.
    mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> shift)) }
        tail.withUnsafeBufferPointer { compress($0) }
        pending.removeAll()
        return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
    }

    /// The lowercase hexadecimal digest of `bytes`.
    static func hexDigest(of bytes: some DataProtocol) -> String {
        var hash = SHA256()
        hash.update(bytes)
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// The lowercase hexadecimal digest of the file at `url`, read in pieces of `pieceSize` bytes (1 MiB).
    ///
    /// - Parameter io: how the file is read; tests force `.descriptor`, the path of systems before macOS 10.15.4
    ///   and iOS 13.4.
    static func hexDigest(ofFileAt url: URL, pieceSize: Int = 1 << 20, using io: FileIO = .automatic) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hash = SHA256()
        while true {
            let piece = try handle.readPiece(upToCount: pieceSize, using: io)
            if piece.isEmpty { break }
            hash.update(piece)
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// Hashes `blocks`, a whole number of 64-byte blocks, into ``state``.
    ///
    /// The rounds are unrolled by eight, each naming the working variables in turn, so that no round moves them.
    private mutating func compress(_ blocks: UnsafeBufferPointer<UInt8>) {
        precondition(blocks.count % 64 == 0)
        guard let base = UnsafeRawPointer(blocks.baseAddress), !blocks.isEmpty else { return }
        var (h0, h1, h2, h3) = (state[0], state[1], state[2], state[3])
        var (h4, h5, h6, h7) = (state[4], state[5], state[6], state[7])
        Self.roundConstants.withUnsafeBufferPointer { constants in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { words in
                for start in stride(from: 0, to: blocks.count, by: 64) {
                    for index in 0..<16 {
                        let word = base.loadUnaligned(fromByteOffset: start + 4 * index, as: UInt32.self)
                        words[index] = UInt32(bigEndian: word)
                    }
                    for index in 16..<64 {
                        let low = words[index - 15]
                        let high = words[index - 2]
                        let sigma0 = low.rotatedRight(7) ^ low.rotatedRight(18) ^ (low >> 3)
                        let sigma1 = high.rotatedRight(17) ^ high.rotatedRight(19) ^ (high >> 10)
                        words[index] = words[index - 16] &+ sigma0 &+ words[index - 7] &+ sigma1
                    }
                    var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                    for index in stride(from: 0, to: 64, by: 8) {
                        Self.round(a, b, c, &d, e, f, g, &h, constants[index] &+ words[index])
                        Self.round(h, a, b, &c, d, e, f, &g, constants[index + 1] &+ words[index + 1])
                        Self.round(g, h, a, &b, c, d, e, &f, constants[index + 2] &+ words[index + 2])
                        Self.round(f, g, h, &a, b, c, d, &e, constants[index + 3] &+ words[index + 3])
                        Self.round(e, f, g, &h, a, b, c, &d, constants[index + 4] &+ words[index + 4])
                        Self.round(d, e, f, &g, h, a, b, &c, constants[index + 5] &+ words[index + 5])
                        Self.round(c, d, e, &f, g, h, a, &b, constants[index + 6] &+ words[index + 6])
                        Self.round(b, c, d, &e, f, g, h, &a, constants[index + 7] &+ words[index + 7])
                    }
                    h0 &+= a
                    h1 &+= b
                    h2 &+= c
                    h3 &+= d
                    h4 &+= e
                    h5 &+= f
                    h6 &+= g
                    h7 &+= h
                }
            }
        }
        (state[0], state[1], state[2], state[3]) = (h0, h1, h2, h3)
        (state[4], state[5], state[6], state[7]) = (h4, h5, h6, h7)
    }

    /// One round, with the working variables named as this round sees them: `d` and `h` are the two it changes (the
    /// next round sees the new `h` as its `a`, and the new `d` as its `e`). `input` is the round's constant plus its
    /// schedule word.
    @inline(__always)
    private static func round(
        _ a: UInt32,
        _ b: UInt32,
        _ c: UInt32,
        _ d: inout UInt32,
        _ e: UInt32,
        _ f: UInt32,
        _ g: UInt32,
        _ h: inout UInt32,
        _ input: UInt32
    ) {
        let sum1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
        let choice = g ^ (e & (f ^ g))
        let first = h &+ sum1 &+ choice &+ input
        let sum0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
        let majority = (a & b) | (c & (a | b))
        d &+= first
        h = first &+ sum0 &+ majority
    }
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        (self >> count) | (self << (32 - count))
    }
}
