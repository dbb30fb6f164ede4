public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The error a transfer rejects with when the server answers with a status outside 200–299.
///
/// ```swift
/// session.cancellableData(for: request).catch { error in
///     if let error = error as? HTTPStatusError, error.statusCode == 404 { showNotFound() }
/// }
/// ```
public struct HTTPStatusError: Error, @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: `response` is an immutable value once the transfer has finished.

    /// The response, with its status code and headers.
    public let response: HTTPURLResponse
    /// The body the server sent with the error status.
    public let body: Data

    /// Makes the error for `response` and the `body` that came with it.
    public init(response: HTTPURLResponse, body: Data) {
        self.response = response
        self.body = body
    }

    /// The error for `response` if it is HTTP with a status outside 200–299; `nil` otherwise. Every transfer decides
    /// it here: a data or upload transfer for its response, a download for the error status it collected the body of.
    init?(checking response: URLResponse?, body: Data) {
        guard let http = response as? HTTPURLResponse, !(200...299).contains(http.statusCode) else { return nil }
        self.init(response: http, body: body)
    }

    /// The HTTP status code.
    public var statusCode: Int { response.statusCode }

    /// `HTTP 404 from <url> (N body bytes)`.
    public var description: String {
        "HTTP \(statusCode) from \(response.url?.absoluteString ?? "?") (\(body.count) body bytes)"
    }
}

extension HTTPStatusError: LocalizedError {
    /// The same sentence as `description`, for `localizedDescription`: what an app shows or logs.
    public var errorDescription: String? { description }
}
