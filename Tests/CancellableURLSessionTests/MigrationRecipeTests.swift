import Cancellable
import CancellableURLSession
import Foundation
import LoopbackHTTPServer
import PromiseCore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The migration guide's recipe for code that read error statuses' bodies under PMKFoundation (step 4): recovering
/// `HTTPStatusError` gives back the status and the body as a value.
@Suite struct MigrationRecipeTests {
    /// The guide's recipe, on a session of the test's own.
    static func signIn(
        _ request: URLRequest,
        on session: URLSession
    ) -> CancellablePromise<(data: Data, response: URLResponse)> {
        session.cancellableData(for: request).recover { error in
            guard let status = error as? HTTPStatusError else { throw error }
            return CancellablePromise.value((data: status.body, response: status.response as URLResponse))
        }
    }

    @Test func recoveringHTTPStatusErrorReadsAnErrorStatusAsAValue() async throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/sign-in" ? .status(409, body: Data("second factor required".utf8)) : .closeBeforeHeaders
        }
        defer { server.stop() }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await Self.signIn(URLRequest(url: server.url("/sign-in")), on: session).async()
        #expect((response as? HTTPURLResponse)?.statusCode == 409)
        #expect(String(decoding: data, as: UTF8.self) == "second factor required")
        // A failure that is not a status still fails.
        await #expect(throws: URLError.self) {
            try await Self.signIn(URLRequest(url: server.url("/down")), on: session).async()
        }
    }
}
