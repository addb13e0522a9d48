using System.Runtime.InteropServices;

namespace Courier.Gateway.Signals;

/// <summary>Linux signal numbers .NET has no <see cref="PosixSignal"/> value for, and kill(2).</summary>
internal static partial class UnixSignals
{
    public const int SigInt = 2;
    public const int SigKill = 9;
    public const int SigUsr1 = 10;
    public const int SigUsr2 = 12;
    public const int SigTerm = 15;
    public const int SigHup = 1;

    private const int Eperm = 1; // errno: operation not permitted
    private const int Esrch = 3; // errno: no such process

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

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
