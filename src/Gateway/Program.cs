using System.Runtime.InteropServices;
using Courier.Actors.Server;
using Courier.Gateway;
using Courier.Gateway.Configuration;
using Microsoft.Extensions.Logging;

// Socket completions run on the socket engine's thread instead of hopping to the thread pool: the
// read pumps never block (they await), so this only removes a hop per read. It must be set before
// the first socket is created; an explicit setting in the environment wins.
const string InlineCompletions = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";
if (Environment.GetEnvironmentVariable(InlineCompletions) is null)
{
    Environment.SetEnvironmentVariable(InlineCompletions, "1");
}

var configuration = ServerConfiguration.Load(args);
switch (configuration.Action)
{
    case CommandLineAction.ShowVersion:
        // nats-server's form; tools parse the first vX.Y.Z, which is the nats-server version implemented.
        Console.WriteLine($"nats-server: v{configuration.Options.NatsServerVersion} (courier v{Broker.CourierVersion})");
        return 0;
    case CommandLineAction.ShowHelp:
        Console.WriteLine(CommandLine.Usage);
        return 0;
    case CommandLineAction.Error:
        Console.Error.WriteLine(configuration.Error);
        return 1;
}

var options = configuration.Options;
StreamWriter? logFile = null;
if (options.LogFile is { } logPath)
{
    logFile = new StreamWriter(new FileStream(logPath, FileMode.Append, FileAccess.Write, FileShare.ReadWrite)) { AutoFlush = true };
    Console.SetOut(logFile);
}

using var loggerFactory = LoggerFactory.Create(builder => builder
    .SetMinimumLevel(options.Trace ? LogLevel.Trace : options.Debug ? LogLevel.Debug : LogLevel.Information)
    .AddFilter("Microsoft", LogLevel.Warning)
    .AddSimpleConsole(console =>
    {
        console.SingleLine = true;
        console.UseUtcTimestamp = true;
        console.TimestampFormat = $"[{Environment.ProcessId}] yyyy/MM/dd HH:mm:ss.ffffff ";
    }));
var log = loggerFactory.CreateLogger("courier");
foreach (var warning in configuration.Warnings)
{
    log.LogWarning("{Warning}", warning);
}

await using var host = new ServerHost(options, loggerFactory);
try
{
    await host.StartAsync();
}
catch (Exception e) when (e is System.Net.Sockets.SocketException or IOException)
{
    log.LogCritical("Error starting server: {Error}", e.Message);
    return 1;
}

var stop = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
using var sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
{
    context.Cancel = true;
    stop.TrySetResult();
});
using var sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, context =>
{
    context.Cancel = true;
    stop.TrySetResult();
});
await stop.Task;
log.LogInformation("Server Exiting..");
logFile?.Dispose();
return 0;
