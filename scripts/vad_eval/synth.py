"""Synthesize varied sentences with espeak-ng to 16 kHz mono float WAVs (utts/)."""
import os, subprocess, random, json
import numpy as np, soundfile as sf, soxr

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "utts")
os.makedirs(OUT, exist_ok=True)

EN = [
 "The quick brown fox jumps over the lazy dog near the river bank.",
 "Please turn off the kitchen lights before you go to bed tonight.",
 "What time does the next train to Manchester leave from platform four?",
 "I think we should postpone the meeting until Thursday afternoon.",
 "Set a timer for twelve minutes and remind me to check the oven.",
 "She sells sea shells by the sea shore, or so they say.",
 "Could you read me the latest headlines about the weather forecast?",
 "Our quarterly revenue grew by seven percent compared to last year.",
 "Add milk, eggs, flour and two lemons to my shopping list.",
 "The museum will be closed on public holidays and every second Monday.",
 "How far is it from here to the nearest petrol station?",
 "Honestly, I have no idea where I left my keys this morning.",
 "Turn the volume down a little, the neighbours are sleeping.",
 "Thirty-three thousand people attended the concert on Saturday night.",
 "Remember to water the tomatoes and feed the cat at six.",
 "Why is the sky blue during the day but red at sunset?",
 "The committee approved the proposal after a lengthy debate.",
 "Hey, can you call my sister and tell her I'm running late?",
 "Scientists discovered a new species of frog in the rain forest.",
 "Open the garage door and switch on the porch light, please.",
 "Yes.",
 "No, not that one.",
 "Okay, thanks.",
 "Stop!",
 "Play some relaxing jazz music in the living room.",
 "My appointment with the dentist has been moved to ten fifteen.",
 "Fresh bread, strong coffee, and a quiet morning: that is all I want.",
 "The password must contain at least eight characters and one number.",
 "If it rains tomorrow, we will have the picnic indoors instead.",
 "Please spell the word necessary for me, slowly.",
 "Lock the front door, arm the alarm, and close the blinds.",
 "He whispered something, but nobody in the back row could hear it.",
 "Convert one hundred and twenty dollars into euros.",
 "What's on my calendar for the rest of the week?",
 "The children built a snowman with a carrot for a nose.",
 "Fifteen, sixteen, seventeen, eighteen, nineteen, twenty.",
 "Schedule a video call with the design team at half past two.",
 "Shh, listen; did you hear that strange noise outside?",
 "The recipe calls for a pinch of salt and a spoonful of sugar.",
 "Navigate to the airport, avoiding toll roads and highways.",
 "Well, um, I suppose that could work, if everyone agrees.",
 "Statistics show that most accidents happen close to home.",
]
OTHER = [
 ("de", "Wie wird das Wetter morgen in Berlin?"),
 ("de", "Bitte schalte das Licht im Wohnzimmer aus."),
 ("de", "Ich habe heute leider keine Zeit, vielleicht am Wochenende."),
 ("fr-fr", "Quelle heure est-il à Paris en ce moment?"),
 ("fr-fr", "Peux-tu mettre de la musique douce dans la cuisine?"),
 ("fr-fr", "Nous irons au marché samedi matin avec les enfants."),
 ("cmn", "今天天气怎么样？我们下午去公园散步吧。"),
 ("cmn", "请把客厅的灯关掉，谢谢。"),
 ("cmn", "明天早上八点提醒我开会。"),
]
EN_VOICES = ["en-us", "en-gb", "en-gb-x-rp", "en-gb-scotland", "en-029", "en-gb-x-gbclan"]
VARIANTS = ["m1", "m2", "m3", "m4", "m5", "m7", "f1", "f2", "f3", "f4", "f5", "klatt", "klatt3", "croak", "whisper"]

def synth(text, voice, speed, pitch, path):
    wav = path + ".tmp.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", wav, text], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    x, sr = sf.read(wav, dtype="float32")
    os.remove(wav)
    if x.ndim > 1: x = x.mean(1)
    if sr != 16000: x = soxr.resample(x, sr, 16000, quality="HQ").astype(np.float32)
    # trim leading/trailing digital silence (but keep intra-utterance pauses)
    nz = np.flatnonzero(np.abs(x) > 1e-4)
    x = x[nz[0]: nz[-1] + 1]
    sf.write(path, x, 16000, subtype="FLOAT")
    return len(x) / 16000

def main():
    rng = random.Random(1234)
    meta = []
    items = [("en", t) for t in EN] + OTHER
    for i, (lang, text) in enumerate(items):
        if lang == "en":
            v = rng.choice(EN_VOICES)
            var = rng.choice(VARIANTS)
            # whisper is rare, keep a couple
            voice = f"{v}+{var}"
        else:
            voice = f"{lang}+{rng.choice(['m1','m3','f2','f4'])}"
        speed = rng.randint(130, 200); pitch = rng.randint(25, 75)
        p = os.path.join(OUT, f"u{i:03d}.wav")
        d = synth(text, voice, speed, pitch, p)
        meta.append(dict(file=os.path.basename(p), lang=lang, voice=voice, speed=speed, pitch=pitch, dur=d, text=text))
        print(f"{p} {voice} {speed} {pitch} {d:.2f}s")
    json.dump(meta, open(os.path.join(OUT, "meta.json"), "w", encoding="utf-8"), indent=1, ensure_ascii=False)

if __name__ == "__main__":
    main()
