using System.Runtime.InteropServices;

namespace Courier.Storage.Internal;

/// <summary>
/// fsync of a directory, so a newly created or deleted file's directory entry is durable. .NET cannot
/// open a directory as a file, so on Linux this calls libc directly; elsewhere it does nothing.
/// </summary>
internal static partial class DirectorySync
{
    private const int ReadOnly = 0; // O_RDONLY

    public static void TrySync(string directory)
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        try
        {
            var fd = Open(directory, ReadOnly);
            if (fd < 0)
            {
                return;
            }

            _ = FSync(fd);
            _ = Close(fd);
        }
        catch (DllNotFoundException)
        {
        }
        catch (EntryPointNotFoundException)
        {
        }
    }

    [DllImport("libc", EntryPoint = "open", SetLastError = true)]
    private static extern int Open([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int flags);

    [DllImport("libc", EntryPoint = "fsync", SetLastError = true)]
    private static extern int FSync(int fd);

    [DllImport("libc", EntryPoint = "close")]
    private static extern int Close(int fd);
}
