using Courier.Fuzz;
using SharpFuzz;

// Courier.Fuzz <target>                        run under AFL++ (afl-fuzz ... -- dotnet Courier.Fuzz.dll <target>)
// Courier.Fuzz <target> --replay <dir>         run every file of a corpus once (a crash throws)
// Courier.Fuzz --list                          the targets
// Courier.Fuzz --make-filestore-seed <file>    writes a real block + index as a filestore corpus entry
if (args.Length == 0 || args[0] == "--list")
{
    Console.WriteLine(string.Join('\n', Targets.Names));
    return args.Length == 0 ? 2 : 0;
}

if (args.Length == 2 && args[0] == "--make-filestore-seed")
{
    File.WriteAllBytes(args[1], Targets.FileStoreSeed());
    return 0;
}

var target = Targets.Get(args[0]);
if (args.Length >= 3 && args[1] == "--replay")
{
    var files = Directory.GetFiles(args[2]);
    foreach (var file in files)
    {
        target(File.ReadAllBytes(file));
    }

    Console.WriteLine($"{args[0]}: {files.Length} inputs replayed");
    return 0;
}

Fuzzer.OutOfProcess.Run(stream =>
{
    using var memory = new MemoryStream();
    stream.CopyTo(memory);
    target(memory.ToArray());
});
return 0;
