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
    @Test func recoveringHTTPStatusErrorReadsAnErrorStatusAsAValue() async throws {
        let server = try LoopbackHTTPServer { _ in .status(409, body: Data("second factor required".utf8)) }
        defer { server.stop() }
        let answer = URLSession.shared.cancellableData(for: URLRequest(url: server.url("/sign-in"))).recover { error in
            guard let status = error as? HTTPStatusError else { throw error }
            return CancellablePromise.value((data: status.body, response: status.response as URLResponse))
        }
        let (data, response) = try await answer.async()
        #expect((response as? HTTPURLResponse)?.statusCode == 409)
        #expect(String(decoding: data, as: UTF8.self) == "second factor required")
        // A failure that is not a status still fails.
        let down = URLSession.shared.cancellableData(for: URLRequest(url: URL(string: "http://127.0.0.1:1/x")!))
            .recover { error -> CancellablePromise<(data: Data, response: URLResponse)> in
                guard let status = error as? HTTPStatusError else { throw error }
                return CancellablePromise.value((data: status.body, response: status.response as URLResponse))
            }
        await #expect(throws: URLError.self) { try await down.async() }
    }
}
