using System.Diagnostics;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>Runs one nats.js script from the js/ folder with <c>node</c> against a server URL.</summary>
public static class NodeScript
{
    private static readonly TimeSpan RunTimeout = TimeSpan.FromSeconds(60); // a script bounds itself at 30 s

    /// <summary>Runs <c>node scripts/&lt;name&gt;.mjs &lt;url&gt;</c> and asserts it exits 0; the failure
    /// message carries the script's output and the server's log tail.</summary>
    public static Task RunAsync(string name, ServerProcess server, IReadOnlyDictionary<string, string>? environment = null) =>
        RunAsync(name, server, server.Url, environment);

    /// <summary>Runs <c>node scripts/&lt;name&gt;.mjs &lt;url&gt;</c> against another of the server's URLs (e.g. its WebSocket one).</summary>
    public static Task RunAsync(string name, ServerProcess server, string url, IReadOnlyDictionary<string, string>? environment = null) =>
        RunAsync(name, url, () => server.Diagnostics(), environment);

    /// <summary>Runs <c>node scripts/&lt;name&gt;.mjs &lt;url&gt;</c> against any broker (e.g. mosquitto); <paramref name="diagnostics"/> feeds the failure message.</summary>
    public static async Task RunAsync(string name, string url, Func<string> diagnostics, IReadOnlyDictionary<string, string>? environment = null)
    {
        var js = RepositoryLayout.JsDirectory;
        foreach (var package in (string[])["nats", "mqtt"])
        {
            if (!File.Exists(Path.Combine(js, "node_modules", package, "package.json")))
            {
                Assert.Fail($"npm package {package} is not installed in {js}: run `npm ci --prefix tests/Courier.Integration.Tests/js` from the repository root");
            }
        }

        var script = Path.Combine(js, "scripts", $"{name}.mjs");
        Assert.True(File.Exists(script), $"no such script: {script}");

        var startInfo = new ProcessStartInfo("node", [script, url])
        {
            WorkingDirectory = js,
            UseShellExecute = false,
        };
        startInfo.Environment["NATS_URL"] = url;
        foreach (var (key, value) in environment ?? new Dictionary<string, string>())
        {
            startInfo.Environment[key] = value;
        }

        using var process = new Process { StartInfo = startInfo };
        var log = new ProcessLog();
        log.Attach(process);
        try
        {
            process.Start();
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            Assert.Fail($"could not start node ({e.Message}): install Node.js 18 or later");
        }

        ProcessLog.BeginReading(process);
        using var cts = new CancellationTokenSource(RunTimeout);
        try
        {
            await process.WaitForExitAsync(cts.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync(CancellationToken.None);
            Assert.Fail($"node {name}.mjs did not finish in {RunTimeout.TotalSeconds} s\n{log.All()}\n{diagnostics()}");
        }

        process.WaitForExit(); // drain the redirected output
        Assert.True(
            process.ExitCode == 0,
            $"node {name}.mjs exited with {process.ExitCode}\n--- script output ---\n{log.All()}\n{diagnostics()}");
    }
}
