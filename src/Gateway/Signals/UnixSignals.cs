using System.Runtime.InteropServices;

namespace Courier.Gateway.Signals;

/// <summary>Linux signal numbers .NET has no <see cref="PosixSignal"/> value for, and kill(2).</summary>
internal static partial class UnixSignals
{
    public const int SigInt = 2;
    public const int SigQuit = 3;
    public const int SigKill = 9;
    public const int SigUsr1 = 10;
    public const int SigUsr2 = 12;
    public const int SigTerm = 15;
    public const int SigHup = 1;

    private const int Eperm = 1; // errno: operation not permitted
    private const int Esrch = 3; // errno: no such process

    /// <summary>
    /// Gives back their default disposition to the signals the server handles that it was started with
    /// ignored, so that the handlers registered later receive them, as nats-server's do: a shell starts
    /// a script's background job (<c>courier &amp;</c>) with SIGINT and SIGQUIT ignored, and <c>nohup</c>
    /// ignores SIGHUP, but Go installs a handler for every signal <c>signal.Notify</c> asks for. .NET
    /// leaves a signal ignored at start-up ignored, so without this <c>kill -INT</c> would not stop such
    /// a server and <c>kill -HUP</c> would not reload it. Must run before anything registers a signal
    /// handler or uses the console (which sets up .NET's signal handling). Linux only (reads the mask from
    /// /proc); elsewhere a no-op.
    /// </summary>
    public static void UnignoreHandled()
    {
        if (IgnoredAtStart() is not { } ignored)
        {
            return;
        }

        foreach (var signal in (int[])[SigHup, SigInt, SigQuit, SigUsr1, SigUsr2, SigTerm])
        {
            if ((ignored & (1UL << (signal - 1))) != 0)
            {
                SetDisposition(signal, SigDfl);
            }
        }
    }

    /// <summary>The SigIgn mask of /proc/self/status (bit n-1 for signal n), or null where there is none.</summary>
    private static ulong? IgnoredAtStart()
    {
        const string Path = "/proc/self/status";
        if (!File.Exists(Path))
        {
            return null;
        }

        foreach (var line in File.ReadLines(Path))
        {
            if (line.StartsWith("SigIgn:", StringComparison.Ordinal))
            {
                return ulong.TryParse(line.AsSpan("SigIgn:".Length).Trim(), System.Globalization.NumberStyles.HexNumber, null, out var mask) ? mask : null;
            }
        }

        return null;
    }

    /// <summary>A raw signal number as the <see cref="PosixSignal"/> that <see cref="PosixSignalRegistration"/> accepts.</summary>
    public static PosixSignal Raw(int signal) => (PosixSignal)signal;

    /// <summary>Sends <paramref name="signal"/> to <paramref name="pid"/>; null on success, else Go's error text.</summary>
    public static string? Send(int pid, int signal)
    {
        if (Kill(pid, signal) == 0)
        {
            return null;
        }

        return Marshal.GetLastPInvokeError() switch
        {
            Esrch => "no such process",
            Eperm => "operation not permitted",
            _ => Marshal.GetLastPInvokeErrorMessage().ToLowerInvariant(),
        };
    }

    private const nint SigDfl = 0;

    [LibraryImport("libc", EntryPoint = "signal")]
    private static partial nint SetDisposition(int signal, nint handler);

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
