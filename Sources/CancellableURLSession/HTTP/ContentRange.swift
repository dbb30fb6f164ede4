import Foundation

/// A `Content-Range` header: `bytes <start>-<end>/<total>` (206), or `bytes */<total>` (416).
struct ContentRange: Equatable {
    /// The first byte, `nil` for `*`.
    let start: Int64?
    /// The last byte, `nil` for `*`.
    let end: Int64?
    /// The whole length, `nil` for `*`.
    let total: Int64?

    init?(_ header: String?) {
        guard let header else { return nil }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = trimmed.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        if parts[1] == "*" {
            total = nil
        } else {
            guard let value = Int64(parts[1]), value >= 0 else { return nil }
            total = value
        }
        if parts[0] == "*" {
            guard total != nil else { return nil }
            (start, end) = (nil, nil)
        } else {
            let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0,
                first <= last, total.map({ last < $0 }) ?? true
            else { return nil }
            (start, end) = (first, last)
        }
    }
}
