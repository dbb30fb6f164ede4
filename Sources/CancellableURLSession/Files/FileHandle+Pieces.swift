import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Which calls the `FileHandle` helpers below read and write with.
///
/// `FileHandle`'s throwing `read(upToCount:)` and `write(contentsOf:)` exist from macOS 10.15.4, iOS 13.4, tvOS 13.4
/// and watchOS 6.2. Before those versions the only Foundation calls are `readData(ofLength:)` and `write(_:)`, which
/// raise an Objective-C exception on an I/O error (a full disk, a file on a volume that went away) — Swift cannot
/// catch it, so the app would crash. There the helpers call `read(2)` and `write(2)` on the handle's descriptor
/// instead, and throw.
enum FileIO: Sendable {
    /// `FileHandle`'s throwing calls where the system has them; the descriptor below those versions.
    case automatic
    /// The descriptor, always: what systems before those versions run, forced so that it is tested on any system.
    case descriptor
}

extension FileHandle {
    /// The next bytes of the file, at most `count`; empty at its end.
    ///
    /// - Throws: the system's error; never raises an Objective-C exception.
    func readPiece(upToCount count: Int, using io: FileIO = .automatic) throws -> Data {
        if io == .automatic, #available(macOS 10.15.4, iOS 13.4, tvOS 13.4, watchOS 6.2, *) {
            return try read(upToCount: count) ?? Data()
        }
        var piece = Data(count: count)
        let read = try piece.withUnsafeMutableBytes { buffer in
            try Self.retryingInterrupted { systemRead(fileDescriptor, buffer.baseAddress, buffer.count) }
        }
        piece.count = read
        return piece
    }

    /// Writes every byte of `data` at the current position.
    ///
    /// - Throws: the system's error; never raises an Objective-C exception. Bytes before the failure may have been
    ///   written.
    func writeAll(_ data: Data, using io: FileIO = .automatic) throws {
        if io == .automatic, #available(macOS 10.15.4, iOS 13.4, tvOS 13.4, watchOS 6.2, *) {
            return try write(contentsOf: data)
        }
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                // A regular file takes every byte at once; a short write (a signal, a quota) writes the rest next.
                offset += try Self.retryingInterrupted {
                    systemWrite(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                }
            }
        }
    }

    /// Writes every byte of `data` at `offset`, without moving the handle's position (`pwrite(2)`): pieces of one
    /// file that arrive out of order go where they belong.
    ///
    /// - Throws: the system's error (`POSIXError`). Bytes before the failure may have been written.
    func writeAll(_ data: Data, at offset: Int64) throws {
        try data.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let count = try Self.retryingInterrupted {
                    systemPWrite(
                        fileDescriptor,
                        buffer.baseAddress! + written,
                        buffer.count - written,
                        offset + Int64(written)
                    )
                }
                guard count > 0 else { throw POSIXError(.EIO) }  // a file that takes no byte would loop forever
                written += count
            }
        }
    }

    /// Reads `count` bytes at `offset`, without moving the handle's position (`pread(2)`).
    ///
    /// - Throws: the system's error (`POSIXError`), or `EIO` if the file ends before `count` bytes.
    func readAll(count: Int, at offset: Int64) throws -> Data {
        var data = Data(count: count)
        try data.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < count {
                let read = try Self.retryingInterrupted {
                    systemPRead(fileDescriptor, buffer.baseAddress! + done, count - done, offset + Int64(done))
                }
                guard read > 0 else { throw POSIXError(.EIO) }  // the file is shorter than what it should hold
                done += read
            }
        }
        return data
    }

    /// Reads the bytes `bytes` of the file in reads of at most `pieceSize` bytes (`pread(2)`), handing each to `body`
    /// in order: what a digest of part of a file reads, in memory a piece at a time.
    ///
    /// - Parameter stopped: asked before each read; once it says `true`, the reading stops with `CancellationError`.
    /// - Throws: the system's error (`POSIXError`), `EIO` if the file ends before `bytes` does, or
    ///   `CancellationError`.
    func readAll(
        _ bytes: Range<Int64>,
        pieceSize: Int = 1 << 20,
        stopped: () -> Bool = { false },
        _ body: (Data) -> Void
    ) throws {
        var offset = bytes.lowerBound
        while offset < bytes.upperBound {
            if stopped() { throw CancellationError() }
            let count = Int(min(bytes.upperBound - offset, Int64(pieceSize)))
            body(try readAll(count: count, at: offset))
            offset += Int64(count)
        }
    }

    /// Calls `operation` until it is not interrupted by a signal (`EINTR`).
    ///
    /// - Returns: its non-negative result.
    /// - Throws: `POSIXError` with `errno` if it returns -1 for any other reason.
    private static func retryingInterrupted(_ operation: () -> Int) throws -> Int {
        while true {
            let result = operation()
            if result >= 0 { return result }
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
    }
}
