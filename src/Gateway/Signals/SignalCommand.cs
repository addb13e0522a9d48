using System.Diagnostics;
using System.Globalization;

namespace Courier.Gateway.Signals;

/// <summary>
/// <c>--signal &lt;command&gt;[=&lt;pid or pid file&gt;]</c>: signals a running server, as nats-server's
/// processSignal and ProcessSignal (main.go, server/signal.go).
/// </summary>
internal static class SignalCommand
{
    private const string ProcessName = "courier"; // what `pgrep` would look for; nats-server looks for "nats-server"

    /// <summary>Sends the signal; returns null on success, else the error to print before exiting 1.</summary>
    public static string? Run(string argument)
    {
        var parts = argument.Split('=');
        string? pid = null;
        if (parts.Length == 2)
        {
            pid = ReadPidFileOrKeep(parts[1]);
        }
        else if (parts.Length > 2)
        {
            return $"invalid signal parameters: [{string.Join(' ', parts[2..])}]";
        }

        int target;
        if (string.IsNullOrEmpty(pid))
        {
            var running = FindRunning();
            if (running.Count == 0)
            {
                return $"no {ProcessName} processes running";
            }

            if (running.Count > 1)
            {
                return $"multiple {ProcessName} processes running:\n{string.Join('\n', running)}";
            }

            target = running[0];
        }
        else if (!int.TryParse(pid, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out target))
        {
            return $"invalid pid: {pid}";
        }

        var signal = parts[0] switch
        {
            "stop" => UnixSignals.SigKill,
            "quit" => UnixSignals.SigInt,
            "reopen" => UnixSignals.SigUsr1,
            "reload" => UnixSignals.SigHup,
            "ldm" => UnixSignals.SigUsr2,
            "term" => UnixSignals.SigTerm,
            _ => 0,
        };
        return signal == 0 ? $"unknown signal \"{parts[0]}\"" : UnixSignals.Send(target, signal);
    }

    /// <summary>nats-server's maybeReadPidFile: the file's content if it can be read, else the text itself.</summary>
    private static string ReadPidFileOrKeep(string pidOrFile)
    {
        try
        {
            return File.ReadAllText(pidOrFile);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            return pidOrFile;
        }
    }

    /// <summary>Other running courier processes (the executable, or the dll run by dotnet), as nats-server's pgrep.</summary>
    private static List<int> FindRunning()
    {
        var self = Environment.ProcessId;
        var pids = new List<int>();
        foreach (var process in Process.GetProcesses())
        {
            using (process)
            {
                if (process.Id != self && IsCourier(process.Id))
                {
                    pids.Add(process.Id);
                }
            }
        }

        pids.Sort();
        return pids;
    }

    private static bool IsCourier(int pid)
    {
        try
        {
            // /proc/<pid>/cmdline: NUL-separated arguments; courier runs as `courier` or `dotnet courier.dll`.
            var args = File.ReadAllText($"/proc/{pid}/cmdline").Split('\0', 3);
            return Path.GetFileName(args[0]) == ProcessName ||
                (args.Length > 1 && Path.GetFileName(args[1]) == ProcessName + ".dll");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }
}
