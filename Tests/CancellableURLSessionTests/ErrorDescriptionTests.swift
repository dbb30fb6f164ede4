import Foundation
import Testing

@testable import CancellableURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an app shows: `localizedDescription` of the module's errors is their own sentence, not "The operation could
/// not be completed. (CancellableURLSession.DownloadIntegrityError error 1.)".
@Suite struct ErrorDescriptionTests {
    static let url = URL(string: "https://example.com/file.iso")!

    @Test func everyErrorOfTheModuleIsDescribedInItsOwnWords() throws {
        let response = try #require(
            HTTPURLResponse(url: Self.url, statusCode: 404, httpVersion: nil, headerFields: nil)
        )
        let errors: [(any Error, String)] = [
            (HTTPStatusError(response: response, body: Data("gone".utf8)), "HTTP 404 from \(Self.url)"),
            (DownloadIntegrityError.lengthMismatch(expected: 10, actual: 9), "10"),
            (DownloadError.partialFileInUse(Self.url), "file.iso"),
            (SegmentedDownloadError.noMirrors, "mirror"),
            (MirrorDropReason.status(503), "503"),
        ]
        for (error, words) in errors {
            #expect(error.localizedDescription == "\(error)")
            #expect(error.localizedDescription.contains(words), "\(error.localizedDescription)")
        }
    }
}
