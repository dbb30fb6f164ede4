import CancellableURLSession
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// One download, then exit: 0 if it succeeded, 1 (with the error on stderr) if not. `line-rate` starts one of these
// per measured download, so that the CPU time the kernel charges to this process is the client's alone (not the
// harness's, the server's, nor the check of the file, which the harness does after this process has exited).
//
// Usage: download-client --kind KIND --out FILE [--length BYTES] [--sha256 HEX]
//                        [--pieces-file FILE --piece-length BYTES] URL…
//
//   plain               Foundation alone: a download task of a session without a delegate, its file moved to FILE
//                       (the floor: what any download on this platform costs, none of this package's code runs)
//   plain-data          Foundation alone: a data task whose delegate writes each piece of the body to FILE as it
//                       arrives (the floor of a download that sees its bytes as they come, as pausing, checkpoints
//                       and hashing on the way need; none of this package's code runs)
//   cancellable         `cancellableDownload`, first URL
//   cancellable-sha256  the same, `verifying: DownloadIntegrity(sha256:)`
//   cancellable-pieces  the same, `verifying: DownloadIntegrity(length:pieces:)` (one hex digest a line in the file)
//   resumable           `resumableDownload`, first URL
//   segmented           `segmentedDownload` from every URL, default options
//   segmented-pieces    the same, `verifying: DownloadIntegrity(length:pieces:)` (one hex digest a line in the file)
//   segmented-sha256    the same, `verifying: DownloadIntegrity(sha256:)`

enum Kind: String, CaseIterable {
    case plain, cancellable, resumable, segmented
    case plainData = "plain-data"
    case cancellableSHA256 = "cancellable-sha256"
    case cancellablePieces = "cancellable-pieces"
    case segmentedPieces = "segmented-pieces"
    case segmentedSHA256 = "segmented-sha256"
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("download-client: \(message)\n".utf8))
    exit(1)
}

/// The `--name value` options, by name, and the URLs.
func parse(_ arguments: ArraySlice<String>) -> (options: [String: String], urls: [URL]) {
    var options: [String: String] = [:]
    var urls: [URL] = []
    var remaining = arguments
    while let argument = remaining.popFirst() {
        if argument.hasPrefix("--") {
            guard let value = remaining.popFirst() else { fail("\(argument) needs a value") }
            options[String(argument.dropFirst(2))] = value
        } else if let url = URL(string: argument) {
            urls.append(url)
        } else {
            fail("not a URL: \(argument)")
        }
    }
    return (options, urls)
}

let (options, urls) = parse(CommandLine.arguments.dropFirst())
guard let kind = options["kind"].flatMap(Kind.init(rawValue:)) else {
    fail("--kind must be one of " + Kind.allCases.map(\.rawValue).joined(separator: ", "))
}
guard let out = options["out"].map({ URL(fileURLWithPath: $0) }) else { fail("--out FILE is missing") }
guard let url = urls.first else { fail("no URL") }

/// The same configuration for every kind. No URL cache: the library's sessions have none on Linux (see
/// `withProgressReporting`), so the floor does without one too, and nobody pays for caching a file read once.
func configuration() -> URLSessionConfiguration {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    return configuration
}

/// What the file must be, from the options the kind uses; `nil` for the kinds that check nothing beyond what the
/// download itself checks (the length the server announced).
func integrity() -> DownloadIntegrity? {
    switch kind {
    case .cancellableSHA256, .segmentedSHA256:
        guard let sha256 = options["sha256"] else { fail("\(kind.rawValue) needs --sha256 HEX") }
        return DownloadIntegrity(sha256: sha256)
    case .segmentedPieces, .cancellablePieces:
        guard let length = options["length"].flatMap(Int64.init),
            let pieceLength = options["piece-length"].flatMap(Int64.init),
            let path = options["pieces-file"],
            let text = try? String(contentsOfFile: path, encoding: .utf8)
        else { fail("\(kind.rawValue) needs --length BYTES, --piece-length BYTES and --pieces-file FILE") }
        let digests = text.split(whereSeparator: \.isNewline).map(String.init)
        return DownloadIntegrity(length: length, pieces: PieceDigests(length: pieceLength, sha256: digests))
    case .plain, .plainData, .cancellable, .resumable, .segmented:
        return nil
    }
}

/// A download task of a session without a delegate, as Foundation's documentation shows it: Foundation writes the
/// body to a temporary file, which the completion handler moves (it is removed when the handler returns).
func plainDownload() async throws {
    let session = URLSession(configuration: configuration())
    defer { session.finishTasksAndInvalidate() }
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
        session.downloadTask(with: url) { location, response, error in
            continuation.resume(
                with: Result {
                    if let error { throw error }
                    guard let location, let status = (response as? HTTPURLResponse)?.statusCode else {
                        throw URLError(.badServerResponse)
                    }
                    guard (200..<300).contains(status) else { throw URLError(.badServerResponse) }
                    try? FileManager.default.removeItem(at: out)
                    try FileManager.default.moveItem(at: location, to: out)
                }
            )
        }
        .resume()
    }
}

/// A data task whose delegate writes each piece of the body to the file as it arrives, on the session's delegate queue.
final class FileWriter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: its callbacks come one at a time, on the session's delegate queue.
    private let handle: FileHandle
    private let done: CheckedContinuation<Void, Error>
    private var failure: Error?

    init(writingTo file: URL, done: CheckedContinuation<Void, Error>) throws {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)  // an empty file to open for writing
        handle = try FileHandle(forWritingTo: file)
        self.done = done
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if !(200..<300).contains(status) { failure = URLError(.badServerResponse) }
        completionHandler(failure == nil ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        do { try handle.write(contentsOf: data) } catch { failure = error }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        try? handle.close()
        if let error = failure ?? error { done.resume(throwing: error) } else { done.resume() }
    }
}

func plainDataDownload() async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
        do {
            let writer = try FileWriter(writingTo: out, done: continuation)
            let session = URLSession(configuration: configuration(), delegate: writer, delegateQueue: nil)
            session.dataTask(with: url).resume()
            session.finishTasksAndInvalidate()
        } catch {
            continuation.resume(throwing: error)
        }
    }
}

do {
    switch kind {
    case .plain:
        try await plainDownload()
    case .plainData:
        try await plainDataDownload()
    case .cancellable, .cancellableSHA256, .cancellablePieces, .resumable:
        // A session the library makes for live delivery, as its documentation suggests; same configuration.
        let session = URLSession.withProgressReporting(configuration: configuration())
        defer { session.finishTasksAndInvalidate() }
        if kind == .resumable {
            _ = try await session.resumableDownload(from: url, to: out).promise.async()
        } else {
            _ = try await session.cancellableDownload(from: url, to: out, verifying: integrity()).async()
        }
    case .segmented, .segmentedPieces, .segmentedSHA256:
        let session = URLSession.withProgressReporting(configuration: configuration())
        defer { session.finishTasksAndInvalidate() }
        _ = try await session.segmentedDownload(from: urls, to: out, verifying: integrity()).async()
    }
} catch {
    fail("\(kind.rawValue): \(error)")
}
