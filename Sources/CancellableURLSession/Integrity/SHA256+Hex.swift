extension SHA256 {
    /// `digest` as lowercase hexadecimal, two digits a byte: how digests are written and compared.
    ///
    /// ```swift
    /// SHA256.hex([0x00, 0xab, 0xff])   // "00abff"
    /// ```
    static func hex(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
