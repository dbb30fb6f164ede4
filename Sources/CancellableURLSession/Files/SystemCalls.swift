#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

// The C calls of the file helpers, by their modules' names: inside `FileHandle` and `PartialFile`, `read`, `write`
// and `open` name their own methods, and the variadic C `open` is imported only through these overlays.

func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Darwin)
    Darwin.open(path, flags, mode)
    #elseif canImport(Glibc)
    Glibc.open(path, flags, mode)
    #elseif canImport(Musl)
    Musl.open(path, flags, mode)
    #elseif canImport(Android)
    Android.open(path, flags, mode)
    #endif
}

func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Darwin)
    Darwin.read(descriptor, buffer, count)
    #elseif canImport(Glibc)
    Glibc.read(descriptor, buffer, count)
    #elseif canImport(Musl)
    Musl.read(descriptor, buffer, count)
    #elseif canImport(Android)
    Android.read(descriptor, buffer, count)
    #endif
}

func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Darwin)
    Darwin.write(descriptor, buffer, count)
    #elseif canImport(Glibc)
    Glibc.write(descriptor, buffer, count)
    #elseif canImport(Musl)
    Musl.write(descriptor, buffer, count)
    #elseif canImport(Android)
    Android.write(descriptor, buffer, count)
    #endif
}

func systemPWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ offset: Int64) -> Int {
    #if canImport(Darwin)
    Darwin.pwrite(descriptor, buffer, count, off_t(offset))
    #elseif canImport(Glibc)
    Glibc.pwrite(descriptor, buffer, count, off_t(offset))
    #elseif canImport(Musl)
    Musl.pwrite(descriptor, buffer, count, off_t(offset))
    #elseif canImport(Android)
    Android.pwrite(descriptor, buffer, count, off_t(offset))
    #endif
}

func systemPRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ offset: Int64) -> Int {
    #if canImport(Darwin)
    Darwin.pread(descriptor, buffer, count, off_t(offset))
    #elseif canImport(Glibc)
    Glibc.pread(descriptor, buffer, count, off_t(offset))
    #elseif canImport(Musl)
    Musl.pread(descriptor, buffer, count, off_t(offset))
    #elseif canImport(Android)
    Android.pread(descriptor, buffer, count, off_t(offset))
    #endif
}
