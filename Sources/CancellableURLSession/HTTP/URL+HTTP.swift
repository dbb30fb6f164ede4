import Foundation

extension URL {
    /// Whether this is an `http` or `https` URL with a host: what a download can ask for a range of, and what resume
    /// data may name as its source.
    ///
    /// ```swift
    /// URL(string: "https://example.com/f")!.isHTTPWithHost   // true
    /// URL(string: "http:///f")!.isHTTPWithHost               // false
    /// ```
    var isHTTPWithHost: Bool {
        ["http", "https"].contains(scheme?.lowercased() ?? "") && !(host ?? "").isEmpty
    }
}
