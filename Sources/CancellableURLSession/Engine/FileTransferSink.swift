import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One transfer of a single-URL download (the first, or a retry): the ``TransferSink`` that hands its response, body
/// and ending to the download's ``FileDownload``, which decides what the body is and ends the download.
///
/// The body of an error status is not the file: it is collected for the ``HTTPStatusError`` the download rejects
/// with, and is not reported as progress. Progress counts the file's bytes, with the speed of this transfer.
final class FileTransferSink: TransferSink, @unchecked Sendable {
    // @unchecked Sendable: its callbacks come one at a time, on the session's delegate queue (or once, from a download
    // task's completion handler).
    private let download: FileDownload
    private let resolver: DecidingResolver<FileDownload.Outcome>
    private let progress: (@Sendable (TransferProgress) -> Void)?
    /// What the download decided the body is, when the response arrived.
    private var action = DownloadState.BodyAction.write(truncating: false)
    /// An error status's body.
    private var errorBody = Data()
    private var received: Int64 = 0
    /// Measured on the clock current when the transfer was made.
    private var speed = TransferSpeed()
    private let clock = PromiseClocks.current

    init(
        _ download: FileDownload,
        _ resolver: DecidingResolver<FileDownload.Outcome>,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) {
        self.download = download
        self.resolver = resolver
        self.progress = progress
    }

    func accept(_ response: URLResponse) -> Bool {
        action = download.accept(response)
        return action != .cancel
    }

    func receive(_ data: Data) -> Bool {
        switch action {
        case .ignore, .cancel:
            return true
        case .collect:
            errorBody.append(data)
            return true
        case .write:
            guard download.write(data) else { return false }
            received += Int64(data.count)
            if let progress, let report = download.progress {
                speed.record(total: received, at: clock.elapsed)
                progress(report.with(bytesPerSecond: speed.bytesPerSecond))
            }
            return true
        }
    }

    func complete(response: URLResponse?, error: Error?) {
        let statusError = action == .collect ? HTTPStatusError(checking: response, body: errorBody) : nil
        download.finish(
            taskError: error,
            statusError: statusError,
            response: response,
            resolver: resolver,
            progress: progress
        )
    }

    /// The transfer ran as a download task (a session with a delegate of the app's own, which receives its
    /// callbacks): the whole body arrived at `location` at once, or the task failed with `error`.
    func complete(downloadedTo location: URL?, response: URLResponse?, error: Error?) {
        if error == nil, let response {
            action = download.accept(response)
            switch action {
            case .write:
                if let size = download.fill(from: location) {
                    progress?(TransferProgress(bytesTransferred: size, totalBytesExpected: size))
                }
            case .collect:
                errorBody = location.flatMap { try? PartialFile.contents(of: $0) } ?? Data()
            case .ignore, .cancel:
                break  // the file already holds every byte (a 416), or the ending says why not
            }
        }
        complete(response: response, error: error)
    }
}
